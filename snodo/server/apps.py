"""MCP Apps (the ``ui`` extension, ``EXTENSION_ID``): a tool with an interactive view.

``view = server.app("ui://weather/view", html=PAGE)`` registers the view: a resource
whose contents are an HTML document of the MIME type ``APP_MIME_TYPE``, with its
``_meta.ui`` (the CSP domains it needs, the permissions it asks, a dedicated domain, a
border preference) checked against the extension's generated models
(``snodo_wire_apps``) and carried both in the listing and in every read. The HTML comes
from a string, a file (read on every read, so an edit shows at once) or a function.

``@view.tool`` registers a tool linked to the view (``_meta.ui.resourceUri``): a host
that renders apps shows the tool's result in it; any other client gets the tool's own
content, so every linked tool must return something a model can read.
``@view.tool(visibility=["app"])`` makes a tool only the view may call (a refresh
button, a form's submit): listed to clients that declare the extension, whose hosts keep
it from the model (the extension's specification, "Visibility"), and neither listed nor callable
for a client that renders no apps, whose model would otherwise see it. A server with an
app advertises the extension in its capabilities, in both eras.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import ValidationError

from snodo.revisions.apps import McpUiResourceMeta, McpUiToolMeta
from snodo.revisions.apps.protocol import EXTENSION_ID, RESOURCE_MIME_TYPE
from snodo.server.csp import check_csp

__all__ = ["APP_MIME_TYPE", "EXTENSION_ID", "App", "renders_apps"]

APP_MIME_TYPE = RESOURCE_MIME_TYPE
"""The MIME type of an app view (the one the extension defines)."""

F = TypeVar("F", bound=Callable[..., Any])
Visibility = Sequence[str]
"""``"model"``, ``"app"`` or both (checked when a tool is linked)."""


def renders_apps(client_capabilities: Mapping[str, Any]) -> bool:
    """Whether a client declared the extension with the app MIME type."""
    extensions = client_capabilities.get("extensions")
    settings = extensions.get(EXTENSION_ID) if isinstance(extensions, Mapping) else None
    types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    return isinstance(types, list) and APP_MIME_TYPE in types


def ui_meta(
    *,
    csp: Mapping[str, Sequence[str]] | None,
    permissions: Sequence[str] | None,
    domain: str | None,
    prefers_border: bool | None,
) -> dict[str, Any]:
    """A view's ``_meta.ui``, checked against ``McpUiResourceMeta``."""
    meta: dict[str, Any] = {}
    if csp:
        # Each value goes into a host's policy as it is: one source expression each.
        check_csp(
            {
                key: values if isinstance(values, str) else list(values)
                for key, values in csp.items()
            }
        )
        meta["csp"] = {key: list(values) for key, values in csp.items()}
    if permissions:
        meta["permissions"] = {name: {} for name in permissions}
    if domain is not None:
        meta["domain"] = domain
    if prefers_border is not None:
        meta["prefersBorder"] = prefers_border
    try:
        McpUiResourceMeta.model_validate(meta)
    except ValidationError as exc:
        raise ValueError(f"an app's ui metadata is not what MCP Apps allows: {exc}") from None
    return meta


class App:
    """A registered view: its ``uri``, and ``tool`` to link tools to it."""

    def __init__(self, server: Any, uri: str, meta: Mapping[str, Any]) -> None:
        self.server = server
        self.uri = uri
        self.meta = dict(meta)

    @overload
    def tool(self, function: F, /) -> F: ...
    @overload
    def tool(
        self, function: None = None, /, *, visibility: Visibility = ..., **options: Any
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        function: F | None = None,
        /,
        *,
        visibility: Visibility = ("model", "app"),
        **options: Any,
    ) -> F | Callable[[F], F]:
        """``@view.tool`` or ``@view.tool(visibility=["app"], name=..., ...)``: register
        a tool shown in this view; the options are ``server.tool``'s."""
        seen = list(visibility)
        if not seen or any(v not in ("model", "app") for v in seen) or len(set(seen)) < len(seen):
            raise ValueError('visibility holds "model", "app" or both, once each')
        link = {"resourceUri": self.uri, "visibility": seen}
        McpUiToolMeta.model_validate(link)
        given = dict(options.pop("meta", None) or {})
        meta = {**given, "ui": {**dict(given.get("ui") or {}), **link}}

        def register(fn: F) -> F:
            tool = self.server.add_tool(fn, meta=meta, **options)
            if "model" not in seen:
                self.server.registry.app_only.add(tool.name)
            return fn

        return register(function) if function is not None else register


def page(html: str | None, path: str | Path | None, function: Callable[[], str] | None) -> Any:
    """The function that gives a view's HTML, from exactly one of the three sources."""
    if sum(x is not None for x in (html, path, function)) != 1:
        raise ValueError("an app needs exactly one of html=, path= or a function")
    if html is not None:
        text = html
        return lambda: text
    if path is not None:
        file = Path(path).resolve()
        if not file.is_file():
            raise ValueError(f"an app's page {file} does not exist")
        return lambda: file.read_text(encoding="utf-8")
    assert function is not None
    return function
