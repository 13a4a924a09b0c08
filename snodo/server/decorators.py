"""How a server's author registers what it offers: the decorators and their ``add_*`` twins.

Each kind's options are declared once (``snodo.server.options``): the decorator, its
``add_*`` twin and the ``make_*`` function below them take the same mapping, an editor
completes it, and a misspelt option is a ``TypeError`` where the decorator is written.
``Server`` takes these methods from ``Decorators`` (resources and templates through
``ResourceDecorators``); they touch nothing of it but its ``registry``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, Unpack, overload

from snodo.revisions import Revision
from snodo.server.invoke import UserFunction
from snodo.server.options import (
    PromptOptions,
    ResourceOptions,
    TemplateOptions,
    ToolOptions,
    check,
)
from snodo.server.prompts import Prompt, make_prompt
from snodo.server.registry import CompletionRef, Registry
from snodo.server.resources import Resource, ResourceTemplate, make_resource, make_template
from snodo.server.revised import Kind, check_fields
from snodo.server.tools import Tool, make_tool

__all__ = ["Decorators"]

F = TypeVar("F", bound=UserFunction)


class ResourceDecorators:
    """``@server.resource`` and ``@server.resource_template``, the ``add_*`` methods
    behind them, and their ``remove_*``."""

    registry: Registry
    revisions_served: tuple[Revision, ...]
    """The revisions the server serves: what ``fields`` may give."""

    def _fielded(
        self, kind: Kind, name: str, options: Mapping[str, Any], item: Any
    ) -> dict[str, Any]:
        """The ``fields`` option of an item, checked (``snodo.server.revised``); the
        registry shapes its lists by revision from then on."""
        given = check_fields(
            kind, name, options.get("fields"), item.definition, self.revisions_served
        )
        if given:
            self.registry.revised = True
        return given

    def resource(self, uri: str, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register the resource at ``uri``: ``@server.resource(uri, ...)``, with the
        options ``snodo.server.options.ResourceOptions`` names.

        The function returns its contents: a ``str`` (text), ``bytes`` (a blob,
        base64 on the wire), a contents object or a list of them, or a
        ``ReadResourceResult``; raise ``snodo.core.errors.ResourceNotFound`` for none.
        """
        check(ResourceOptions, options, f"resource {uri!r}")

        def register(fn: F) -> F:
            self.add_resource(fn, uri, **options)
            return fn

        return register

    def add_resource(
        self, function: UserFunction, uri: str, **options: Unpack[ResourceOptions]
    ) -> Resource:
        """Register a resource as ``@server.resource(uri, ...)`` does."""
        check(ResourceOptions, options, f"resource {uri!r}")
        resource = make_resource(function, uri, options, threads=self.registry.threads)
        self.registry.visibility.mark("resources", uri, options)
        resource.definition.update(self._fielded("resources", uri, options, resource))
        return self.registry.add_resource(resource)

    def remove_resource(self, uri: str) -> None:
        """Stop offering the resource at ``uri`` (nothing if there is none); listeners
        hear that the resource list changed."""
        self.registry.remove_resource(uri)

    def resource_template(
        self, uri_template: str, **options: Unpack[TemplateOptions]
    ) -> Callable[[F], F]:
        """Register the resources a URI template matches: ``@server.resource_template(
        "notes://{name}", ...)``, with the options ``TemplateOptions`` names. Each
        variable (``{var}``, ``{+var}``, ``{/var*}``, ``{?a,b}``, ``{#var}``:
        ``snodo.server.uri_templates``) is passed, percent-decoded and converted to its
        annotation, as the function's argument of that name."""
        check(TemplateOptions, options, f"resource template {uri_template!r}")

        def register(fn: F) -> F:
            self.add_template(fn, uri_template, **options)
            return fn

        return register

    def add_template(
        self, function: UserFunction, uri_template: str, **options: Unpack[TemplateOptions]
    ) -> ResourceTemplate:
        """Register a resource template as ``@server.resource_template(...)`` does."""
        check(TemplateOptions, options, f"resource template {uri_template!r}")
        template = make_template(function, uri_template, options, threads=self.registry.threads)
        self.registry.visibility.mark("templates", uri_template, options)
        template.definition.update(self._fielded("templates", uri_template, options, template))
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
        self, function: None = None, /, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]: ...
    def tool(
        self, function: F | None = None, /, **options: Unpack[ToolOptions]
    ) -> F | Callable[[F], F]:
        """Register a tool: ``@server.tool`` or ``@server.tool(name=..., ...)``, with the
        options ``snodo.server.options.ToolOptions`` names."""
        check(ToolOptions, options, "tool")

        def register(fn: F) -> F:
            self.add_tool(fn, **options)
            return fn

        return register(function) if function is not None else register

    def add_tool(self, function: UserFunction, **options: Unpack[ToolOptions]) -> Tool:
        """Register a tool as ``@server.tool(...)`` does, with the same options; returns
        the Tool as listed."""
        check(ToolOptions, options, "tool")
        tool = make_tool(function, options, threads=self.registry.threads)
        self.registry.visibility.mark("tools", tool.name, options)
        tool.definition.update(self._fielded("tools", tool.name, options, tool))
        return self.registry.add_tool(tool)

    def remove_tool(self, name: str) -> None:
        """Stop offering the tool ``name`` (nothing if there is none)."""
        self.registry.remove_tool(name)

    @overload
    def prompt(self, function: F, /) -> F: ...
    @overload
    def prompt(
        self, function: None = None, /, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...
    def prompt(
        self, function: F | None = None, /, **options: Unpack[PromptOptions]
    ) -> F | Callable[[F], F]:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=..., ...)``, with
        the options ``snodo.server.options.PromptOptions`` names.

        The function takes the prompt's arguments (strings) and returns its messages: a
        ``str`` (one user message), a message object (``{"role", "content"}``) or a list
        of them, or a ``GetPromptResult``.
        """
        check(PromptOptions, options, "prompt")

        def register(fn: F) -> F:
            self.add_prompt(fn, **options)
            return fn

        return register(function) if function is not None else register

    def add_prompt(self, function: UserFunction, **options: Unpack[PromptOptions]) -> Prompt:
        """Register a prompt as ``@server.prompt(...)`` does."""
        check(PromptOptions, options, "prompt")
        prompt = make_prompt(function, options, threads=self.registry.threads)
        self.registry.visibility.mark("prompts", prompt.name, options)
        prompt.definition.update(self._fielded("prompts", prompt.name, options, prompt))
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
        function: UserFunction,
        *,
        inline: bool = False,
        timeout: float | None = None,
    ) -> None:
        """Register a completion as ``@server.completion(ref_type, name)`` does."""
        self.registry.add_completion(ref_type, name, function, inline=inline, timeout=timeout)
