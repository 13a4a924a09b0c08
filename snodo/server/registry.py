"""What a server offers: its tools, resources, resource templates, prompts and completions.

The registry owns the registered objects and answers the few questions dispatch and the
transports ask of them (look up by name or URI, list the definitions, which capabilities
follow from what is registered, which headers a tool mirrors). It knows nothing of
requests or transports; a change that clients listening for list changes should hear of
is reported through the ``changed`` callback, with the subscription key it concerns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from snodo.core.caching import CacheHint
from snodo.server.invoke import Invoker, UserFunction, invoker
from snodo.server.prompts import Prompt
from snodo.server.resources import Resource, ResourceTemplate
from snodo.server.threads import Threads
from snodo.server.tools import Tool
from snodo.server.visibility import Visibility

__all__ = ["Changed", "CompletionRef", "Registry"]

Changed = Callable[[str], object]
"""Told ``toolsListChanged``, ``resourcesListChanged`` or ``promptsListChanged``."""

CompletionRef = Literal["ref/prompt", "ref/resource"]

MirroredHeaders = tuple[tuple[tuple[str, ...], str], ...]


def _unheard(key: str) -> None:
    """The default ``changed``: nobody listens."""


class Registry:
    """The registered tools, resources, templates, prompts and completion providers.

    The mappings are read by dispatch; they change only through the methods here, so
    every change that clients may listen for is reported.
    """

    def __init__(self, changed: Changed = _unheard, threads: Threads | None = None) -> None:
        self._changed = changed
        self.threads = threads
        """Where the sync handlers registered through the server run."""
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: list[ResourceTemplate] = []
        self.prompts: dict[str, Prompt] = {}
        self.completions: dict[tuple[str, str], Invoker] = {}
        self.extensions: dict[str, dict[str, Any]] = {}
        """Extensions the server offers, by identifier: their settings, as
        ``server/discover`` and ``initialize`` advertise them."""
        self.extension_methods: dict[str, Any] = {}
        """The requests extensions add (``snodo.server.extensions.ExtensionMethod``)."""
        self.modern_methods: set[str] = set()
        """Those of them legacy sessions may not call (``Extension(legacy=False)``)."""
        self.visibility = Visibility()
        """Each item's tags and who sees it (``snodo.server.visibility``)."""
        self.revised = False
        """Some item was given ``fields=``: lists are shaped by each request's revision
        (``snodo.server.revised``)."""

    # -- registration ------------------------------------------------------------------

    def add_tool(self, tool: Tool) -> Tool:
        changed = tool.name in self.tools or bool(self.tools)
        self.tools[tool.name] = tool
        if changed:  # the first tool changes the capabilities, not a list anyone watches
            self._changed("toolsListChanged")
        return tool

    def remove_tool(self, name: str) -> None:
        self.visibility.forget("tools", name)
        if self.tools.pop(name, None) is not None:
            self._changed("toolsListChanged")

    def add_resource(self, resource: Resource) -> Resource:
        self.resources[resource.uri] = resource
        self._changed("resourcesListChanged")
        return resource

    def remove_resource(self, uri: str) -> None:
        self.visibility.forget("resources", uri)
        if self.resources.pop(uri, None) is not None:
            self._changed("resourcesListChanged")

    def add_template(self, template: ResourceTemplate) -> ResourceTemplate:
        kept = [t for t in self.templates if t.uri_template != template.uri_template]
        self.templates = [*kept, template]  # the same template again replaces it
        self._changed("resourcesListChanged")
        return template

    def remove_template(self, uri_template: str) -> None:
        self.visibility.forget("templates", uri_template)
        kept = [t for t in self.templates if t.uri_template != uri_template]
        if len(kept) != len(self.templates):
            self.templates = kept
            self._changed("resourcesListChanged")

    def add_prompt(self, prompt: Prompt) -> Prompt:
        self.prompts[prompt.name] = prompt
        self._changed("promptsListChanged")
        return prompt

    def remove_prompt(self, name: str) -> None:
        self.visibility.forget("prompts", name)
        if self.prompts.pop(name, None) is not None:
            self._changed("promptsListChanged")

    def add_completion(
        self,
        ref_type: CompletionRef,
        name: str,
        function: UserFunction,
        *,
        inline: bool = False,
        timeout: float | None = None,
    ) -> None:
        self.completions[(ref_type, name)] = invoker(
            function, inline=inline, timeout=timeout, threads=self.threads
        )

    # -- questions -----------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities that follow from what is registered."""
        caps: dict[str, Any] = {"logging": {}}
        if self.tools:
            caps["tools"] = {"listChanged": True}
        if self.resources or self.templates:
            caps["resources"] = {"listChanged": True, "subscribe": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.prompts or self.templates:
            caps["completions"] = {}
        if self.extensions:
            caps["extensions"] = {key: dict(value) for key, value in self.extensions.items()}
        return caps

    def offers(self, method: str) -> bool:
        """Whether a method's feature is on offer (a server without tools has no tools/*)."""
        feature = method.split("/", 1)[0]
        if feature == "tools":
            return bool(self.tools)
        if feature == "resources":
            return bool(self.resources or self.templates)
        if feature == "prompts":
            return bool(self.prompts)
        if feature == "completion":
            return bool(self.prompts or self.templates)
        return True

    def mirrored_headers(self, tool_name: str) -> MirroredHeaders:
        """The ``Mcp-Param-*`` headers a call of this tool carries; none for unknown tools."""
        tool = self.tools.get(tool_name)
        return tool.headers if tool is not None else ()

    def find_resource(
        self,
        uri: str,
        granted: frozenset[str] | None = None,
        hides: Callable[[Any, str], bool] | None = None,
    ) -> tuple[Invoker, dict[str, Any], str | None, frozenset[str], CacheHint | None] | None:
        """The reader of ``uri``, its template arguments, MIME type, required scopes and
        caching hint; a fixed resource wins over templates, and templates are tried in
        registration order. With ``granted``, items needing other scopes are passed
        over, as the lists that ``definitions`` filters leave them out; so are those
        ``hides(kind, key)`` hides (``snodo.server.visibility``)."""
        resource = self.resources.get(uri)
        if (
            resource is not None
            and (granted is None or resource.scopes <= granted)
            and (hides is None or not hides("resources", uri))
        ):
            return resource.invoker, {}, resource.mime_type, resource.scopes, resource.cache
        for template in self.templates:
            if granted is not None and not template.scopes <= granted:
                continue
            if hides is not None and hides("templates", template.uri_template):
                continue
            found = template.match(uri)
            if found is not None:
                return template.invoker, found, template.mime_type, template.scopes, template.cache
        return None

    def completed_scopes(self, ref_type: str, key: str) -> frozenset[str]:
        """The scopes of what a completion request completes: its prompt (by name) or its
        resource template (by URI template); completing arguments reads the item's data."""
        if ref_type == "ref/prompt":
            prompt = self.prompts.get(key)
            return prompt.scopes if prompt is not None else frozenset()
        found = (t.scopes for t in self.templates if t.uri_template == key)
        return next(found, frozenset())

    def definitions(
        self,
        kind: Literal["tools", "resources", "templates", "prompts"],
        granted: frozenset[str] | None = None,
    ) -> list[Any]:
        """The definitions a list method shows, in registration order; with ``granted``,
        only those of items whose scopes it holds."""
        items: Iterable[Tool | Resource | ResourceTemplate | Prompt]
        if kind == "tools":
            items = self.tools.values()
        elif kind == "resources":
            items = self.resources.values()
        elif kind == "templates":
            items = self.templates
        else:
            items = self.prompts.values()
        if granted is None:
            return [item.definition for item in items]
        return [item.definition for item in items if item.scopes <= granted]
