"""The legacy wire: its revisions, its methods, and messages checked against its models.

The legacy revisions (``VERSIONS``: the newest initialize-based revision and the two
before it, all served with its models, as the official SDKs do) negotiate a version
once with ``initialize`` and carry no per-request ``_meta`` envelope. The generated
legacy revision's package (``snodo.revisions``, the catalog's newest legacy row) holds
its models and method tables; this module is where the legacy era reads them:

- incoming params are checked against the legacy params model of their method
  (-32602), before the kernel or the modern core sees them;
- results go out in the legacy shape (no ``resultType``, caching hints or
  ``serverInfo`` stamp: ``legacy_result``) and are checked against the legacy result
  model; a result that fails is the server's fault (-32603, detail to the log);
- every server-to-client request the bridge sends is checked against its legacy
  request model the same way.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from pydantic import ValidationError

from snodo.core.envelope import is_modern
from snodo.core.errors import InternalError, InvalidParams
from snodo.revisions import REVISIONS, Revision
from snodo.revisions.authoring.protocol import META_SERVER_INFO as SERVER_INFO

__all__ = [
    "ASSUMED_VERSION",
    "FORWARDED",
    "LATEST",
    "LEGACY",
    "VERSIONS",
    "batch_refusal",
    "check_params",
    "check_request",
    "check_result",
    "is_initialize",
    "legacy_result",
    "negotiate",
]

log = logging.getLogger("snodo.legacy")

LEGACY: Final[Revision] = REVISIONS.newest("legacy")
"""The legacy revision whose package checks legacy traffic (it speaks every version in
``VERSIONS``)."""
METHODS: Final = LEGACY.methods
SERVER_REQUESTS: Final = LEGACY.server_requests
VERSIONS: Final = REVISIONS.versions("legacy")
"""Legacy revisions served, newest first."""
LATEST: Final = VERSIONS[0]
ASSUMED_VERSION: Final = VERSIONS[-1]
"""What the legacy transport page says to assume of a request with no version header
and no other way to tell: the oldest revision of this transport, the last served."""

FORWARDED: Final = frozenset(METHODS) & frozenset(
    name for modern in REVISIONS.served("modern") for name in modern.methods
)
"""Legacy methods whose meaning the modern core already has: it answers them. The rest
of the legacy table (initialize, ping, logging/setLevel, resources/subscribe and
unsubscribe) is the kernel's own."""

_MODERN_ONLY_KEYS: Final = ("resultType", "ttlMs", "cacheScope")


def is_initialize(message: Any) -> bool:
    """A legacy initialize request. One with modern ``_meta`` is a modern client asking
    for a method its revision removed: the core answers that one (-32601)."""
    return (
        isinstance(message, dict)
        and message.get("method") == "initialize"
        and "id" in message
        and not is_modern(message)
    )


def batch_refusal(size: int, version: str | None, most: int) -> str | None:
    """Why a JSON-RPC batch of ``size`` messages is refused in a session of ``version``
    (the oldest revision has batches, later ones removed them; ``most`` bounds their
    length, ``LegacyLimits.max_batch``), or None when it may be handled."""
    if version not in LEGACY.batch_versions:
        return f"protocol version {version} has no batches"
    if size == 0:
        return "an empty batch"
    return f"a batch of {size} messages; at most {most}" if size > most else None


def negotiate(requested: object, offered: tuple[str, ...] = VERSIONS) -> str:
    """The version to answer an initialize with: the client's if offered, else the
    newest offered."""
    if isinstance(requested, str) and requested in offered:
        return requested
    return offered[0] if offered else LATEST


def check_params(method: str, params: dict[str, Any]) -> None:
    """-32602 when params fail the legacy model of ``method`` (never echoing values)."""
    if method not in METHODS:
        return  # an extension's own method: its model checks it (snodo.server.extensions)
    try:
        METHODS[method].params.model_validate(params)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(step) for step in first["loc"])
        raise InvalidParams(f"Invalid params: {where}: {first['msg']}") from exc


def legacy_result(result: dict[str, Any]) -> dict[str, Any]:
    """A complete modern result as the legacy revisions shape it."""
    out = {key: value for key, value in result.items() if key not in _MODERN_ONLY_KEYS}
    meta = out.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO in meta:
        rest = {key: value for key, value in meta.items() if key != SERVER_INFO}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


def check_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` when the legacy result model of ``method`` accepts it, else -32603."""
    if method not in METHODS:
        return result  # an extension's own method
    try:
        METHODS[method].result.model_validate(result)
    except ValidationError as exc:
        log.error("%s result does not fit the legacy wire: %s", method, exc)
        raise InternalError() from exc
    return result


def check_request(method: str, params: dict[str, Any]) -> None:
    """-32603 when a server-to-client request does not fit the legacy wire."""
    spec = SERVER_REQUESTS.get(method)
    message = {"jsonrpc": "2.0", "id": 0, "method": method, "params": params}
    try:
        if spec is None:
            raise ValueError(f"no legacy request {method}")
        spec.request.model_validate(message)
    except (ValidationError, ValueError) as exc:
        log.error("input request %s does not fit the legacy wire: %s", method, exc)
        raise InternalError() from exc
