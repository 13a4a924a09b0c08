"""MCP Apps for clients and hosts: declare that the host renders app views, and read what
a server says about them, typed.

``Client(extensions=apps.DECLARE)`` declares the extension with the one MIME type it
defines (``APP_MIME_TYPE``), in both eras; a server then lists its app-only
tools too, and a host keeps those from its model (``model_tools``). ``tool_ui(tool)`` is
a listed tool's ``_meta.ui`` (the view's ``resourceUri`` and who may call it) as
``snodo_wire_apps.McpUiToolMeta``; ``view_ui(contents)`` a read view's ``_meta.ui`` as
``McpUiResourceMeta``, from which a host builds the frame's CSP and permissions (each
CSP value checked to be one source expression first). The
messages between a host and the view it renders (``ui/initialize``, the tool input and
result notifications, ...) are the models of ``snodo_wire_apps``, for a Python host that
embeds a web view; rendering is the host's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from snodo.client.errors import ProtocolViolation
from snodo.extensions.apps.csp import check_csp
from snodo.revisions.apps import McpUiResourceMeta, McpUiToolMeta
from snodo.revisions.apps.protocol import EXTENSION_ID, RESOURCE_MIME_TYPE

__all__ = [
    "APP_MIME_TYPE",
    "DECLARE",
    "EXTENSION_ID",
    "model_tools",
    "offered",
    "tool_ui",
    "view_ui",
]

APP_MIME_TYPE = RESOURCE_MIME_TYPE
"""The MIME type of an app view."""

DECLARE: dict[str, dict[str, Any]] = {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}
"""``Client(extensions=DECLARE)``: this client renders app views."""


def _meta_of(item: Any) -> Mapping[str, Any]:
    if isinstance(item, BaseModel):
        item = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    meta = item.get("_meta") if isinstance(item, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def offered(discovered: Any) -> bool:
    """Whether a server's ``DiscoverResult`` (or capabilities) advertises MCP Apps."""
    if isinstance(discovered, BaseModel):
        discovered = discovered.model_dump(mode="json", by_alias=True, exclude_none=True)
    capabilities = (
        discovered.get("capabilities", discovered) if isinstance(discovered, Mapping) else {}
    )
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    return isinstance(extensions, Mapping) and EXTENSION_ID in extensions


def tool_ui(tool: Any) -> McpUiToolMeta | None:
    """A listed tool's ``_meta.ui``, or None for a tool without a view."""
    ui = _meta_of(tool).get("ui")
    return McpUiToolMeta.model_validate(ui) if isinstance(ui, Mapping) else None


def view_ui(contents: Any) -> McpUiResourceMeta | None:
    """A read view's ``_meta.ui`` (CSP domains, permissions, domain, border), or None.

    Every CSP value must be one source expression (``snodo.extensions.apps.csp``): a host puts
    them into its frame's policy as they are, so a value such as ``x; script-src *``
    would write the server's own directive. Such a view is a ``ProtocolViolation``."""
    ui = _meta_of(contents).get("ui")
    if not isinstance(ui, Mapping):
        return None
    csp = ui.get("csp")
    if isinstance(csp, Mapping):
        try:
            check_csp(csp)
        except ValueError as exc:
            raise ProtocolViolation(f"the view's ui metadata: {exc}") from None
    return McpUiResourceMeta.model_validate(ui)


def model_tools(tools: Iterable[Any]) -> list[Any]:
    """The tools a host shows its model: all but those only a view may call."""
    kept = []
    for tool in tools:
        ui = tool_ui(tool)
        visibility = ui.visibility if ui is not None else None
        if not isinstance(visibility, list) or not visibility or "model" in visibility:
            kept.append(tool)
    return kept
