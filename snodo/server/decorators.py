"""How a server's author registers what it offers: the decorators and their ``add_*`` twins.

Every option is an explicit keyword, so an editor completes it, the reference lists it,
and a misspelt one is a ``TypeError`` where the decorator is written. ``Server`` takes
these methods from ``Decorators`` (resources and templates through
``ResourceDecorators``); they touch nothing of it but its ``registry``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, overload

from snodo.core.caching import CacheHint
from snodo.server.invoke import Handler
from snodo.server.prompts import Prompt, make_prompt
from snodo.server.registry import CompletionRef, Registry
from snodo.server.resources import Resource, ResourceTemplate, make_resource, make_template
from snodo.server.tools import TaskSupport, Tool, make_tool

__all__ = ["Decorators"]

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
        ``ReadResourceResult``; raise ``snodo.core.errors.ResourceNotFound`` for none.

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


class Decorators(ResourceDecorators):
    """``@server.tool``, ``@server.prompt`` and ``@server.completion``, the ``add_*``
    methods behind them and their ``remove_*``; and from ``ResourceDecorators``,
    ``@server.resource`` and ``@server.resource_template``."""

    registry: Registry

    @overload
    def tool(self, function: F, /) -> F: ...
    @overload
    def tool(
        self,
        function: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured_output: bool = True,
        annotations: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
        task: TaskSupport | None = None,
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        function: F | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured_output: bool = True,
        annotations: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
        task: TaskSupport | None = None,
    ) -> F | Callable[[F], F]:
        """Register a tool: ``@server.tool`` or ``@server.tool(name=..., ...)``.

        :param name: the tool's name; the function's by default.
        :param title: a display name for people.
        :param description: for the model; the function's docstring by default.
        :param input_schema: the arguments' JSON Schema; built from the function's
            parameters and their type hints by default (``Context`` is left out).
        :param output_schema: the ``structuredContent`` JSON Schema; built from the
            return annotation by default (``snodo.server.outputs``: a model, dataclass
            or TypedDict as it is, other types wrapped as ``{"result": ...}``).
        :param structured_output: False: no output schema from the return annotation.
        :param annotations: ``ToolAnnotations`` hints (``readOnlyHint``, ...).
        :param icons: ``Icon`` objects for hosts to show.
        :param meta: the tool's ``_meta``.
        :param scopes: OAuth scopes a caller's token must grant to call it.
        :param inline: run a sync function on the event loop, not in a thread: only
            for one that never blocks.
        :param timeout: seconds a call may take; past them the caller gets an error
            saying so, and the call is cancelled (async) or abandoned (thread).
        :param task: ``"optional"`` or ``"required"``: it may, or must, run as a task.
        """

        def register(fn: F) -> F:
            self.add_tool(
                fn,
                name=name,
                title=title,
                description=description,
                input_schema=input_schema,
                output_schema=output_schema,
                structured_output=structured_output,
                annotations=annotations,
                icons=icons,
                meta=meta,
                scopes=scopes,
                inline=inline,
                timeout=timeout,
                task=task,
            )
            return fn

        return register(function) if function is not None else register

    def add_tool(
        self,
        function: Handler,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured_output: bool = True,
        annotations: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
        task: TaskSupport | None = None,
    ) -> Tool:
        """Register a tool as ``@server.tool(...)`` does, with the same options; returns
        the Tool as listed."""
        tool = make_tool(
            function,
            name=name,
            title=title,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            structured_output=structured_output,
            annotations=annotations,
            icons=icons,
            meta=meta,
            scopes=scopes,
            inline=inline,
            timeout=timeout,
            threads=self.registry.threads,
            task=task,
        )
        return self.registry.add_tool(tool)

    def remove_tool(self, name: str) -> None:
        """Stop offering the tool ``name`` (nothing if there is none)."""
        self.registry.remove_tool(name)

    @overload
    def prompt(self, function: F, /) -> F: ...
    @overload
    def prompt(
        self,
        function: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        arguments: list[Mapping[str, Any]] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
    ) -> Callable[[F], F]: ...
    def prompt(
        self,
        function: F | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        arguments: list[Mapping[str, Any]] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
    ) -> F | Callable[[F], F]:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=..., ...)``.

        The function takes the prompt's arguments (strings) and returns its messages: a
        ``str`` (one user message), a message object (``{"role", "content"}``) or a list
        of them, or a ``GetPromptResult``.

        :param name: the prompt's name; the function's by default.
        :param title: a display name for people.
        :param description: the function's docstring by default.
        :param arguments: ``PromptArgument`` objects; by default one per parameter,
            required when it has no default.
        :param icons: ``Icon`` objects for hosts to show.
        :param meta: the prompt's ``_meta``.
        :param scopes: OAuth scopes a caller's token must grant to get it.
        :param inline: run a sync function on the event loop, not in a thread: only
            for one that never blocks.
        :param timeout: seconds a call may take; past them the caller gets an error
            saying so, and the call is cancelled (async) or abandoned (thread).
        """

        def register(fn: F) -> F:
            self.add_prompt(
                fn,
                name=name,
                title=title,
                description=description,
                arguments=arguments,
                icons=icons,
                meta=meta,
                scopes=scopes,
                inline=inline,
                timeout=timeout,
            )
            return fn

        return register(function) if function is not None else register

    def add_prompt(
        self,
        function: Handler,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        arguments: list[Mapping[str, Any]] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] = (),
        inline: bool = False,
        timeout: float | None = None,
    ) -> Prompt:
        """Register a prompt as ``@server.prompt(...)`` does."""
        prompt = make_prompt(
            function,
            name=name,
            title=title,
            description=description,
            arguments=arguments,
            icons=icons,
            meta=meta,
            scopes=scopes,
            inline=inline,
            timeout=timeout,
            threads=self.registry.threads,
        )
        return self.registry.add_prompt(prompt)

    def remove_prompt(self, name: str) -> None:
        """Stop offering the prompt ``name`` (nothing if there is none); listeners hear
        that the prompt list changed."""
        self.registry.remove_prompt(name)

    def completion(
        self,
        ref_type: CompletionRef,
        name: str,
        *,
        inline: bool = False,
        timeout: float | None = None,
    ) -> Callable[[F], F]:
        """Complete arguments of a prompt (``"ref/prompt"``, by name) or a resource
        template (``"ref/resource"``, by URI template).

        The function receives ``argument``, ``value`` and ``context`` (the other
        arguments already given) and returns candidate strings.

        :param inline: run a sync function on the event loop, not in a thread.
        :param timeout: seconds a call may take before the request fails.
        """

        def register(fn: F) -> F:
            self.add_completion(ref_type, name, fn, inline=inline, timeout=timeout)
            return fn

        return register

    def add_completion(
        self,
        ref_type: CompletionRef,
        name: str,
        function: Handler,
        *,
        inline: bool = False,
        timeout: float | None = None,
    ) -> None:
        """Register a completion as ``@server.completion(ref_type, name)`` does."""
        self.registry.add_completion(ref_type, name, function, inline=inline, timeout=timeout)
