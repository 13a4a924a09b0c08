"""Which era a server speaks, how a client tells, and how the answer is remembered.

Theory of operation (basic/versioning.mdx, "Backward Compatibility with
Initialization-Based Versions"). A server is *modern* (the current revision: every
request carries its version in ``_meta``, no session) or *legacy* (earlier ones: an
``initialize`` handshake opens a session). A dual-era client tells them apart once per
server and keeps the verdict:

- stdio (basic/transports/stdio.mdx): probe with ``server/discover``. A
  ``DiscoverResult`` or a recognised modern error means modern; any other error, a
  timeout or a closed pipe means legacy. The rule is never keyed to one error code.
- Streamable HTTP (basic/transports/streamable-http.mdx): the first real request is
  the probe, so a modern server costs no extra round trip. A 4xx whose body is a
  recognised modern error means modern; any other 4xx means legacy.

A *recognised modern error* is a JSON-RPC error whose code only the modern revision
defines (header mismatch, missing client capability, unsupported protocol version).
Verdicts for HTTP are cached per origin for the life of this process (the spec's
SHOULD); a stdio verdict lives with the server process. When a cached verdict stops
holding (a legacy ``initialize`` refused, a modern request refused with a non-modern
4xx) the client probes again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

from snodo.client.errors import ClientError
from snodo.client.transports.base import SessionTransport, TransportError
from snodo.revisions import REVISIONS, Revisions
from snodo.revisions.authoring.errors import ErrorCode

__all__ = [
    "LEGACY_PROTOCOL_VERSIONS",
    "MODERN_ERROR_CODES",
    "MODERN_PROTOCOL_VERSIONS",
    "VERDICTS",
    "Era",
    "EraChoice",
    "ModernOnly",
    "NotModern",
    "UnsupportedServer",
    "error_message",
    "is_error_response",
    "is_modern_error",
    "named_versions",
    "probe",
    "read_probe",
    "spoken_versions",
]

Era = Literal["modern", "legacy"]
EraChoice = Literal["auto", "modern", "legacy"]

MODERN_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = REVISIONS.versions("modern")
"""The modern protocol versions a client speaks unless told others (``Client(versions=)``),
newest (the one it starts with) first: those of every modern revision the catalog does
not mark a draft (``snodo.revisions``). The client settles on the newest the server
speaks too; a draft is spoken when named."""
LEGACY_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = REVISIONS.versions("legacy")
"""Initialize-based revisions a legacy session accepts, newest (the one offered) first:
those the served legacy revisions' packages speak."""

MODERN_ERROR_CODES: Final[frozenset[int]] = frozenset(
    {
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)
"""The error codes the current schema defines beyond JSON-RPC's own."""

VERDICTS: dict[str, Era] = {}
"""Era of each HTTP origin met by this process."""


def spoken_versions(
    versions: Sequence[str] | None, protocol_version: str | None, revisions: Revisions
) -> tuple[str, ...]:
    """The modern versions a client speaks, newest first: ``versions`` (each a version
    a modern revision of ``revisions`` speaks, a draft's included), by default those
    of every modern revision that is not a draft, with ``protocol_version`` (the one
    it starts with) among them unless it is an older revision's. ValueError for a
    version no revision speaks."""
    spoken = tuple(versions) if versions is not None else revisions.versions("modern")
    modern = [v for r in revisions.all if r.era == "modern" for v in r.versions]
    if protocol_version is not None and protocol_version not in spoken:
        if versions is not None:
            raise ValueError(f"protocol_version {protocol_version} is not one of {spoken}")
        if protocol_version in modern:  # a draft named to start with
            spoken = (*spoken, protocol_version)
        elif protocol_version not in {v for r in revisions.all for v in r.versions}:
            raise ValueError(f"protocol_version {protocol_version}: no revision speaks it")
        # else an older revision's: the first request says it, and a modern server's
        # -32022 moves the client to a version of ``spoken`` (basic/versioning.mdx)
    unknown = [v for v in spoken if v not in modern]
    if unknown or not spoken:
        raise ValueError(
            f"versions: {', '.join(unknown) or 'none given'}: a client speaks modern "
            f"versions of its registry ({', '.join(modern)})"
        )
    return tuple(sorted(spoken, key=modern.index))


class UnsupportedServer(ClientError):
    """The server speaks no revision this client does; ``supported`` lists the
    versions it named (empty when it named none), ``detail`` what it said; ``status``
    the HTTP status it refused with (a redirect's ``location`` too), when it did."""

    def __init__(
        self,
        detail: str,
        supported: list[str] | None = None,
        spoken: tuple[str, ...] = MODERN_PROTOCOL_VERSIONS,
        *,
        status: int | None = None,
        location: str = "",
    ) -> None:
        self.detail = detail
        self.supported = list(supported or [])
        self.status = status
        self.location = location
        ours = ", ".join((*spoken, *LEGACY_PROTOCOL_VERSIONS))
        theirs = ", ".join(self.supported) or "none named"
        super().__init__(f"{detail} (server supports: {theirs}; this client: {ours})")


class ModernOnly(ClientError):
    """A modern feature (``manual=True`` flows, ``resume``, ``listen``) asked of a legacy
    server."""


class NotModern(Exception):
    """A refusal of a modern request that no modern server sends: an HTTP status
    without a recognised modern error."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def is_error_response(body: Any) -> bool:
    return (
        isinstance(body, dict)
        and body.get("jsonrpc") == "2.0"
        and isinstance(body.get("error"), dict)
        and isinstance(body["error"].get("code"), int)
    )


def is_modern_error(body: Any) -> bool:
    """A JSON-RPC error response that only a modern server sends."""
    return is_error_response(body) and body["error"]["code"] in MODERN_ERROR_CODES


def error_message(body: Any) -> str:
    """What a refusal said, for an error message: the JSON-RPC message or the raw body."""
    if is_error_response(body):
        return str(body["error"].get("message", ""))
    return "" if body is None else str(body)[:200]


def named_versions(body: Any) -> list[str]:
    """The versions an error response lists in ``data.supported`` (a modern-only server
    SHOULD name them when it refuses ``initialize``: basic/versioning.mdx)."""
    error = body.get("error") if isinstance(body, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    return [str(v) for v in supported] if isinstance(supported, list) else []


def read_probe(
    response: Any,
    preferred: str,
    choice: EraChoice,
    spoken: tuple[str, ...] = MODERN_PROTOCOL_VERSIONS,
) -> tuple[Era, str]:
    """The verdict of a ``server/discover`` probe's response, and the modern version to
    speak: a DiscoverResult or a recognised modern error means modern (with the newest
    version both sides speak, of ``spoken``); anything else means legacy
    (basic/transports/stdio.mdx)."""
    result = response.get("result") if isinstance(response, dict) else None
    if isinstance(result, dict):
        raw = result.get("supportedVersions")
        offered = [str(v) for v in raw] if isinstance(raw, list) else []
    elif is_modern_error(response):
        offered = named_versions(response)
    else:
        return "legacy", preferred
    usable = [v for v in spoken if v in offered]
    if usable:
        return "modern", usable[0]
    if not offered or preferred in offered:
        return "modern", preferred
    if choice == "auto" and any(v in offered for v in LEGACY_PROTOCOL_VERSIONS):
        return "legacy", preferred  # a dual-era server whose modern versions are not ours
    raise UnsupportedServer("no protocol version in common", offered, spoken)


async def probe(
    transport: SessionTransport,
    discover: dict[str, Any],
    on_notification: Callable[[dict[str, Any]], None],
    timeout: float,
    preferred: str,
    choice: EraChoice,
    spoken: tuple[str, ...] = MODERN_PROTOCOL_VERSIONS,
) -> tuple[Era, str]:
    """Send the ``server/discover`` message and read the verdict (``read_probe``); a
    timeout means legacy, and so does a pipe that closed, after a restart, since some
    legacy servers exit on an early request."""
    try:
        async with asyncio.timeout(timeout):  # not wait_for: see snodo.client.limits.within
            response = await transport.request(discover, {}, on_notification)
    except TimeoutError:
        return "legacy", preferred
    except (TransportError, ConnectionError):
        await transport.restart()
        return "legacy", preferred
    return read_probe(response, preferred, choice, spoken)
