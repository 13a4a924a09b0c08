"""Which era a message belongs to, the ``_meta`` every modern request carries, and the
modern core's answer to a legacy handshake.

A modern message carries the per-request ``_meta`` envelope with its protocol version;
a legacy one does not. The legacy package serves legacy messages before the core sees
them; ``refuse_initialize`` is what the core answers an ``initialize`` that reached it
anyway (a modern-only server, or a stdio process already modern), so the core needs
nothing from the legacy package to say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from snodo.core.errors import InvalidParams, MethodNotFound, UnsupportedProtocolVersion
from snodo.revisions.authoring.protocol import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION

__all__ = ["check_version", "is_modern", "not_found", "refuse_initialize", "required_meta"]


def is_modern(message: Any) -> bool:
    """A message carrying the per-request ``_meta`` of the modern revisions."""
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


def check_version(version: str, supported: Sequence[str]) -> None:
    """-32022 naming ``supported`` unless ``version`` is one of them."""
    if version not in supported:
        raise UnsupportedProtocolVersion(version, list(supported))


def refuse_initialize(params: dict[str, Any], supported: Sequence[str]) -> None:
    """-32022 naming ``supported`` for a legacy initialize that reached the modern core.
    One carrying modern ``_meta`` is left alone: to a modern client it is a removed
    method (-32601)."""
    if not is_modern({"params": params}):
        requested = params.get("protocolVersion")
        asked = requested if isinstance(requested, str) else ""
        raise UnsupportedProtocolVersion(asked, list(supported))


def required_meta(params: Any) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """``_meta``, its protocol version and client capabilities, which every request
    must carry (basic/index.mdx); -32602 when any is missing."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise InvalidParams("Missing required params._meta")
    version = meta.get(META_PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise InvalidParams(f"Missing required _meta field {META_PROTOCOL_VERSION}")
    declared = meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(declared, dict):
        raise InvalidParams(f"Missing required _meta field {META_CLIENT_CAPABILITIES}")
    return meta, version, declared


def not_found(method: str, params: Any) -> MethodNotFound:
    """-32601 naming the method and, when the request names one, its protocol version:
    what a method no served revision (or not the request's) defines answers."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if isinstance(version, str):
        return MethodNotFound(f"Method not found: {method} (protocol version {version})")
    return MethodNotFound(f"Method not found: {method}")
