"""MCP Apps for servers (the ``ui`` extension, ``EXTENSION_ID``): a tool with an
interactive view.

``view = App(server, "ui://weather/view", PAGE)`` registers the view: a resource whose
contents are an HTML document of the MIME type ``APP_MIME_TYPE``, with its ``_meta.ui``
(the CSP domains it needs, the permissions it asks, a dedicated domain, a border
preference) checked against the extension's generated models (``snodo_wire_apps``) and
carried both in the listing and in every read. The HTML comes from a string, a file
(read on every read, so an edit shows at once) or a function. The first view offers the
extension at the server (``Apps``), in both eras.

``@view.tool`` registers a tool linked to the view (``_meta.ui.resourceUri``): a host
that renders apps shows the tool's result in it; any other client gets the tool's own
content, so every linked tool must return something a model can read.
``@view.tool(visibility=["app"])`` makes a tool only the view may call (a refresh
button, a form's submit): listed to clients that declare the extension, whose hosts keep
it from the model (the extension's specification, "Visibility"), and, through the
extension's visibility rule (a hook of the server's ``Visibility``), neither listed nor
callable for a client that renders no apps, whose model would otherwise see it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pydantic import ValidationError

from snodo.core.context import Context
from snodo.extensions.apps.csp import check_csp
from snodo.revisions.apps import McpUiResourceMeta, McpUiToolMeta
from snodo.revisions.apps.protocol import EXTENSION_ID, RESOURCE_MIME_TYPE
from snodo.server.extensions import Extension, Host
from snodo.server.registry import Registry
from snodo.server.tools import Tool
from snodo.server.visibility import Kind

if TYPE_CHECKING:
    from snodo.server import Server

__all__ = ["APP_MIME_TYPE", "EXTENSION_ID", "App", "Apps", "renders_apps"]

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


class AppOnly:
    """The extension's ``VisibilityHook``: a tool only a view may call is for clients that
    render views; the tools list differs by client while there is one."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        """The app-only tools, by name, as registered (a tool registered again under
        the name without ``["app"]`` is another object, and shown)."""
        self.registry: Registry | None = None

    def caller_dependent(self, kind: Kind) -> bool:
        """Whether a tool registered now is for apps only."""
        registry = self.registry
        if kind != "tools" or registry is None:
            return False
        return any(registry.tools.get(name) is tool for name, tool in self.tools.items())

    def hides(self, ctx: Context, kind: Kind, key: str) -> bool:
        """Nothing but an app-only tool, which only a client rendering views sees."""
        if kind != "tools" or self.registry is None:
            return False
        tool = self.tools.get(key)
        if tool is None or self.registry.tools.get(key) is not tool:
            return False
        return not renders_apps(ctx.client_capabilities)


class Apps(Extension):
    """MCP Apps at one server: advertised (in both eras) once it has a view; keeps the
    app-only tools from clients that render none. ``App`` offers it."""

    def __init__(self) -> None:
        super().__init__(EXTENSION_ID)
        self.app_only = AppOnly()
        self.visibility = self.app_only

    def install(self, server: Host) -> None:
        """Advertise the extension and hide app-only tools by caller."""
        super().install(server)
        self.app_only.registry = server.registry


def apps_of(server: Server) -> Apps:
    """The server's ``Apps`` extension, offered the first time."""
    found = server.extensions.get(EXTENSION_ID)
    if found is None:
        found = server.add_extension(Apps())
    if not isinstance(found, Apps):
        raise ValueError(f"{EXTENSION_ID} is offered at this server by {type(found).__name__}")
    return found


class App:
    """A view registered at ``server``: ``App(server, "ui://...", html)``, an HTML page
    from ``html``, a file at ``path`` (read on each read) or ``function``; link tools to
    it with ``tool``.

    :param csp: origins by directive: ``connectDomains``, ``resourceDomains``,
        ``frameDomains``, ``baseUriDomains``; each value one CSP source expression
        (``snodo.extensions.apps.csp``), else ``ValueError``.
    :param permissions: what the view asks the host for: ``camera``,
        ``microphone``, ``geolocation``, ``clipboardWrite``.
    :param domain: a dedicated origin for the view's sandbox, as the host names it.
    :param prefers_border: whether the host should draw a border around it.
    :param scopes: OAuth scopes a caller's token must grant to read it.
    """

    def __init__(
        self,
        server: Server,
        uri: str,
        html: str | None = None,
        *,
        path: str | Path | None = None,
        function: Callable[[], str] | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: Mapping[str, Sequence[str]] | None = None,
        permissions: Sequence[str] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        scopes: Iterable[str] = (),
    ) -> None:
        if not uri.startswith("ui://"):
            raise ValueError(f"an app's URI starts with ui://, not {uri!r}")
        meta = ui_meta(
            csp=csp, permissions=permissions, domain=domain, prefers_border=prefers_border
        )
        source = page(html, path, function)
        ui = {"ui": meta} if meta else None

        def view() -> dict[str, Any]:
            contents: dict[str, Any] = {"text": source()}
            if ui is not None:
                contents["_meta"] = ui
            return contents

        self.apps = apps_of(server)
        server.add_resource(
            view,
            uri,
            name=name or uri.removeprefix("ui://"),
            title=title,
            description=description or "An MCP Apps view.",
            mime_type=APP_MIME_TYPE,
            meta=ui,
            scopes=scopes,
            inline=path is None and function is None,
        )
        self.server = server
        self.uri = uri
        self.meta = meta

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
                self.apps.app_only.tools[tool.name] = tool
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
