"""Registering resources and resource templates: the decorators and their ``add_*`` twins,
and ``app``, an MCP Apps view (a resource of its own kind, ``snodo.server.apps``).

``Decorators`` (``snodo.server.decorators``) takes these from ``ResourceDecorators``;
like it, they touch nothing of the server but its ``registry``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from snodo.server.apps import APP_MIME_TYPE, EXTENSION_ID, App, page, ui_meta
from snodo.server.caching import CacheHint
from snodo.server.invoke import Handler
from snodo.server.registry import Registry
from snodo.server.resources import Resource, ResourceTemplate, make_resource, make_template

__all__ = ["ResourceDecorators"]

F = TypeVar("F", bound=Handler)


class ResourceDecorators:
    """``@server.resource`` and ``@server.resource_template``, the ``add_*`` methods
    behind them, and their ``remove_*``."""

    registry: Registry

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        extra: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        annotations: Mapping[str, Any] | None = None,
        size: int | None = None,
        meta: Mapping[str, Any] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
    ) -> Callable[[F], F]:
        """Register the resource at ``uri``: ``@server.resource(uri, ...)``.

        The function returns its contents: a ``str`` (text), ``bytes`` (a blob,
        base64 on the wire), a contents object or a list of them, or a
        ``ReadResourceResult``; raise ``snodo.errors.ResourceNotFound`` for none.

        :param name: the resource's name; the function's by default.
        :param title: a display name for people.
        :param description: the function's docstring by default.
        :param mime_type: the ``mimeType`` of its contents, listed and read.
        :param icons: ``Icon`` objects for hosts to show.
        :param annotations: ``Annotations`` (``audience``, ``priority``, ``lastModified``).
        :param size: its size in bytes, before any encoding.
        :param meta: the resource's ``_meta``.
        :param cache: the ``ttlMs`` and ``cacheScope`` its reads carry (else the
            server's ``read_cache``).
        :param extra: further ``Resource`` fields as they go on the wire.
        :param scopes: OAuth scopes a caller's token must grant to read it.
        :param inline: run a sync function on the event loop, not in a thread: only
            for one that never blocks.
        :param timeout: seconds a call may take; past them the caller gets an error
            saying so, and the call is cancelled (async) or abandoned (thread).
        """

        def register(fn: F) -> F:
            self.add_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                extra=extra,
                icons=icons,
                annotations=annotations,
                size=size,
                meta=meta,
                cache=cache,
                scopes=scopes,
                inline=inline,
                timeout=timeout,
            )
            return fn

        return register

    def add_resource(
        self,
        function: Handler,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        extra: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        annotations: Mapping[str, Any] | None = None,
        size: int | None = None,
        meta: Mapping[str, Any] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
    ) -> Resource:
        """Register a resource as ``@server.resource(uri, ...)`` does."""
        resource = make_resource(
            function,
            uri,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            extra=extra,
            icons=icons,
            annotations=annotations,
            size=size,
            meta=meta,
            cache=cache,
            scopes=scopes,
            inline=inline,
            timeout=timeout,
            threads=self.registry.threads,
        )
        return self.registry.add_resource(resource)

    def app(
        self,
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
    ) -> App:
        """Register an MCP Apps view at ``uri`` (``ui://...``): an HTML page from ``html``,
        a file at ``path`` (read on each read) or ``function``; link tools to it with the
        returned ``App``'s ``tool`` (``snodo.server.apps``).

        :param csp: origins by directive: ``connectDomains``, ``resourceDomains``,
            ``frameDomains``, ``baseUriDomains``.
        :param permissions: what the view asks the host for: ``camera``,
            ``microphone``, ``geolocation``, ``clipboardWrite``.
        :param domain: a dedicated origin for the view's sandbox, as the host names it.
        :param prefers_border: whether the host should draw a border around it.
        """
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

        self.add_resource(
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
        self.registry.extensions.setdefault(EXTENSION_ID, {})
        return App(self, uri, meta)

    def remove_resource(self, uri: str) -> None:
        """Stop offering the resource at ``uri`` (nothing if there is none); listeners
        hear that the resource list changed."""
        self.registry.remove_resource(uri)

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        extra: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
        allow_paths: bool = False,
    ) -> Callable[[F], F]:
        """Register the resources a URI template matches: ``@server.resource_template(
        "notes://{name}", ...)``. Each variable (``{var}``, ``{+var}``, ``{/var*}``,
        ``{?a,b}``, ``{#var}``: ``snodo.server.uri_templates``) is passed, percent-decoded
        and converted to its annotation, as the function's argument of that name.

        :param name: the template's name; the function's by default.
        :param title: a display name for people.
        :param description: the function's docstring by default.
        :param mime_type: the ``mimeType`` of what it reads.
        :param icons: ``Icon`` objects for hosts to show.
        :param annotations: ``Annotations`` (``audience``, ``priority``, ``lastModified``).
        :param meta: the template's ``_meta``.
        :param cache: the ``ttlMs`` and ``cacheScope`` reads through it carry.
        :param extra: further ``ResourceTemplate`` fields as they go on the wire.
        :param scopes: OAuth scopes a caller's token must grant to read through it.
        :param inline: run a sync function on the event loop, not in a thread: only
            for one that never blocks.
        :param timeout: seconds a call may take; past them the caller gets an error
            saying so, and the call is cancelled (async) or abandoned (thread).
        :param allow_paths: take values that decode to a path traversal, an absolute
            path, a backslash or a NUL byte; by default such a URI does not match (the
            read is "resource not found"). Only for a function that confines paths itself.
        """

        def register(fn: F) -> F:
            self.add_template(
                fn,
                uri_template,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                extra=extra,
                icons=icons,
                annotations=annotations,
                meta=meta,
                cache=cache,
                scopes=scopes,
                inline=inline,
                timeout=timeout,
                allow_paths=allow_paths,
            )
            return fn

        return register

    def add_template(
        self,
        function: Handler,
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        extra: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
        allow_paths: bool = False,
    ) -> ResourceTemplate:
        """Register a resource template as ``@server.resource_template(...)`` does."""
        template = make_template(
            function,
            uri_template,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            extra=extra,
            icons=icons,
            annotations=annotations,
            meta=meta,
            cache=cache,
            scopes=scopes,
            inline=inline,
            timeout=timeout,
            threads=self.registry.threads,
            allow_paths=allow_paths,
        )
        return self.registry.add_template(template)

    def remove_template(self, uri_template: str) -> None:
        """Stop offering the resource template ``uri_template`` (nothing if there is
        none); listeners hear that the resource list changed."""
        self.registry.remove_template(uri_template)
