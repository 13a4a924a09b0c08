"""``ToolSearch``: a server's tools found by searching, not listed.

``Server(tool_search=ToolSearch())`` makes ``tools/list`` show two tools (and any named
in ``always_visible``): ``search_tools``, which takes a query and answers the tools that
fit it, best first, as structured content under ``tools`` (each its name, title,
description and input schema; none when nothing fits), and ``call_tool``, which calls
a tool by name with its arguments. Every tool stays callable by its own name. What a
caller may not see (items its token's scopes do not reach under ``hide_unauthorized``,
what an extension's visibility rule hides, such as MCP Apps' app-only tools for a client
that renders no views) is not in its catalog, so it is never found, nor called through
``call_tool``.

The catalog searched is the caller's own ``tools/list``: the registry's, or for a
gateway (``proxy``, ``mount``) the servers' behind it. Its index is built once per
catalog and kept while the catalog stays the same: a registered tool added or removed,
or a backend's tools list change, makes the next search build it again; a backend's
listing is also read again after ``max_age`` seconds. The same search answers
``tools/list`` with a ``query`` (SEP-1821) and ``tools/catalog`` (SEP-2636,
``snodo.search.disclosure``).

The catalog is kept in the content shape (``outputSchema``) whichever revision asked
for it; every list, description and result goes out through the request's revision's
tool encoder (``snodo.server.tool_encoders``), as a registered tool's does: under
SEP-3279's draft the two tools are listed with their ``outputVariants`` and answer
``outputs`` (``search_tools`` both of its ``assistant`` ones, ``call_tool`` the called
tool's ``assistant/content``).
"""

from __future__ import annotations

import copy
import json
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from snodo.core import jsonrpc
from snodo.core.context import Context, refilled
from snodo.core.errors import InvalidParams, McpError
from snodo.core.result import InputRequired
from snodo.core.types import Outcome
from snodo.search.disclosure import disclosure_extension
from snodo.search.engine import Engine, Index, Lexical
from snodo.search.text import stemmer
from snodo.server.methods import (
    ServerOffering,
    forwarded,
    revised_items,
    view_of,
    visible_definitions,
)
from snodo.server.pagination import page
from snodo.server.tool_encoders import ASSISTANT_CONTENT, ASSISTANT_STRUCTURED, encoder_of

if TYPE_CHECKING:
    from snodo.server import Server

__all__ = ["MAX_QUERY", "ToolSearch", "shown"]

MAX_QUERY: Final = 1000
"""The longest query searched, in characters."""
_MAX_PAGES: Final = 100
_KEPT: Final = 8
"""Indexes kept at once: one per catalog that callers see differently."""
_SHOWN: Final = ("name", "title", "description", "inputSchema")
_FOUND: Final = (ASSISTANT_CONTENT, ASSISTANT_STRUCTURED)
"""The outputs ``search_tools`` declares (it has an output schema)."""
_CALLED: Final = (ASSISTANT_CONTENT,)
"""The outputs ``call_tool`` declares: the called tool's content."""


def _declared(ctx: Context) -> str:
    """The extensions the caller declared, with their settings, as one key: what a
    server behind shows may depend on them (MCP Apps' app-only tools)."""
    declared = ctx.client_capabilities.get("extensions")
    return json.dumps(declared, sort_keys=True, default=str) if declared else ""


def shown(definition: Mapping[str, Any]) -> dict[str, Any]:
    """What a search answers of a tool: its name, title, description, input schema."""
    return {key: definition[key] for key in _SHOWN if key in definition}


class _Entry:
    """One catalog as a caller sees it, and its index (built on first search)."""

    __slots__ = ("by_name", "definitions", "index", "private", "read_at")

    def __init__(self, definitions: list[dict[str, Any]], private: bool, read_at: float):
        self.definitions = definitions
        self.by_name = {d["name"]: d for d in definitions if isinstance(d.get("name"), str)}
        self.index: Index | None = None
        self.private = private
        self.read_at = read_at


class ToolSearch:
    """Tool search for a server: ``max_results`` tools at most for a query, the tools
    named in ``always_visible`` listed beside the two it adds, ``engine`` ranking them
    (``snodo.search.engine.Lexical`` unless given). ``search_tool`` and ``call_tool``
    name the two tools; ``disclosure`` offers the experimental ``tools/catalog`` and
    ``tools/describe`` and the ``query`` of ``tools/list``
    (``snodo.search.disclosure``); ``max_age``: how long a backend's listing is kept
    (seconds) when no list change says it changed."""

    def __init__(
        self,
        max_results: int = 5,
        always_visible: Iterable[str] = (),
        engine: Engine | None = None,
        *,
        search_tool: str = "search_tools",
        call_tool: str = "call_tool",
        disclosure: bool = True,
        max_age: float = 60.0,
    ) -> None:
        if max_results < 1:
            raise ValueError("max_results must be at least 1")
        if search_tool == call_tool:
            raise ValueError("the search and call tools need names of their own")
        stemmer("english")  # the search extra: missing, say so now, not at the first search
        self.max_results = max_results
        self.always_visible = frozenset(always_visible)
        self.engine: Engine = engine if engine is not None else Lexical()
        self.search_tool = search_tool
        self.call_tool = call_tool
        self.disclosure = disclosure
        self.max_age = max_age
        self.version = 0
        """Raised by every tools list change: an index of an older version is rebuilt."""
        self._kept: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._server: Server | None = None

    # -- set-up -------------------------------------------------------------------------

    def attach(self, server: Server) -> None:
        """Search ``server``'s tools (``Server(tool_search=...)`` calls this)."""
        if self._server is not None and self._server is not server:
            raise ValueError("a ToolSearch serves one server")
        if server.offering.tool_search not in (None, self):
            raise ValueError("this server already has a tool search")
        self._server = server
        server.offering.search_with(self)
        server.subscriptions.watchers.append(self.changed)
        if self.disclosure:
            server.add_extension(disclosure_extension(self, server))

    def changed(self, key: str) -> None:
        """A list change: the tools one makes every kept index stale."""
        if key == "toolsListChanged":
            self.version += 1
            self._kept.clear()

    # -- the definitions of the two tools -----------------------------------------------

    def tools(self) -> list[dict[str, Any]]:
        """The definitions of ``search_tools`` and ``call_tool``."""
        return [
            {
                "name": self.search_tool,
                "title": "Search tools",
                "description": (
                    "Find the tools for a task among the many this server has. Say in a "
                    "few words what you want to do, in any language. Answers the tools "
                    "that fit, best first, with their input schemas, and none when no "
                    f"tool fits. Call a tool found by its name, or with {self.call_tool}."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": "What you want to do, in a few words",
                            "maxLength": MAX_QUERY,
                        }
                    },
                    "required": ["query"],
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
                    "required": ["tools"],
                },
                "annotations": {"readOnlyHint": True, "openWorldHint": False},
            },
            {
                "name": self.call_tool,
                "title": "Call a tool",
                "description": (
                    f"Call a tool that {self.search_tool} found, by its name, with its arguments."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The tool's name"},
                        "arguments": {
                            "type": "object",
                            "description": "Its arguments, as its input schema says",
                        },
                    },
                    "required": ["name"],
                },
            },
        ]

    # -- the request path (snodo.server.methods.SearchLayer) ---------------------------

    async def handle(
        self, served: ServerOffering, ctx: Context, params: Mapping[str, Any]
    ) -> Outcome:
        """``tools/list`` and ``tools/call`` of a server that searches."""
        plain = copy.copy(served)
        plain.search_with(None)
        if ctx.request_method == "tools/list":
            return await self._list(plain, ctx, params)
        name = params.get("name")
        if name == self.search_tool:
            return await self._search_call(plain, ctx, params)
        if name == self.call_tool:
            return await self._call_through(plain, ctx, params)
        return await _plain(plain, ctx, params)

    async def _list(
        self, served: ServerOffering, ctx: Context, params: Mapping[str, Any]
    ) -> Outcome:
        query = params.get("query")
        if query is not None:  # SEP-1821: the list filtered by a query
            if not isinstance(query, str) or len(query) > MAX_QUERY:
                raise InvalidParams(f"Invalid params: query: a string of at most {MAX_QUERY}")
            found, entry = await self.search(served, ctx, query)
            listed = [entry.by_name[name] for name in found]
            return {"tools": self.revised(served, ctx, listed), "cacheScope": "private"}
        entry = await self.catalog(served, ctx)
        pinned = [d for d in entry.definitions if d["name"] in self.always_visible]
        items = self.revised(served, ctx, [*pinned, *self.tools()])
        chosen, next_cursor = page(items, "tools/list", params.get("cursor"), served.page_size)
        result: dict[str, Any] = {"tools": list(chosen)}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if entry.private and pinned:
            result["cacheScope"] = "private"
        return result

    async def _search_call(
        self, served: ServerOffering, ctx: Context, params: Mapping[str, Any]
    ) -> Outcome:
        encoder = encoder_of(ctx.revision)
        selection = encoder.selected(self.search_tool, _FOUND, params)
        arguments = params.get("arguments") or {}
        query = arguments.get("query") if isinstance(arguments, Mapping) else None
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY:
            failed = _tool_error(
                f"Invalid arguments for tool {self.search_tool}: query must be a string of"
                f" 1 to {MAX_QUERY} characters"
            )
            return encoder.encoded(self.search_tool, failed, selection)
        found, entry = await self.search(served, ctx, query)
        tools = [shown(entry.by_name[name]) for name in found]
        text = json.dumps({"tools": tools}, ensure_ascii=False, separators=(",", ":"))
        made = {"content": [{"type": "text", "text": text}], "structuredContent": {"tools": tools}}
        return encoder.encoded(self.search_tool, made, selection)

    async def _call_through(
        self, served: ServerOffering, ctx: Context, params: Mapping[str, Any]
    ) -> Outcome:
        encoder = encoder_of(ctx.revision)
        selection = encoder.selected(self.call_tool, _CALLED, params)
        arguments = params.get("arguments") or {}
        inner = arguments.get("name") if isinstance(arguments, Mapping) else None
        given = arguments.get("arguments", {}) if isinstance(arguments, Mapping) else None
        if not isinstance(inner, str) or not isinstance(given, Mapping):
            failed = _tool_error(
                f"Invalid arguments for tool {self.call_tool}: name must be a tool's name"
                " and arguments an object"
            )
            return encoder.encoded(self.call_tool, failed, selection)
        if inner in (self.search_tool, self.call_tool):
            failed = _tool_error(f"{self.call_tool} calls the server's tools, not {inner}")
            return encoder.encoded(self.call_tool, failed, selection)
        # The called tool answers its own assistant/content, the one output call_tool has.
        called = {k: v for k, v in params.items() if k != "requestedOutputs"}
        try:
            return await _plain(served, ctx, {**called, "name": inner, "arguments": dict(given)})
        except InvalidParams as refused:  # an unknown tool: the model reads why
            return encoder.encoded(self.call_tool, _tool_error(refused.message), selection)

    def revised(
        self, served: ServerOffering, ctx: Context, definitions: list[dict[str, Any]]
    ) -> list[Any]:
        """Catalog definitions (the content shape) as the request's revision lists them."""
        return revised_items(served, ctx.revision, "tools", definitions)

    # -- the catalog and its index -----------------------------------------------------

    async def search(
        self, served: ServerOffering, ctx: Context, query: str, limit: int | None = None
    ) -> tuple[list[str], _Entry]:
        """The names of the tools of this caller's catalog that fit ``query``, best
        first (none when nothing fits), and the catalog they come from."""
        entry = await self.catalog(served, ctx)
        if entry.index is None:
            entry.index = self.engine.index(entry.definitions)
        hits = entry.index.search(query, limit or self.max_results)
        return [hit.name for hit in hits if hit.name in entry.by_name], entry

    async def catalog(self, served: ServerOffering, ctx: Context) -> _Entry:
        """The tools this caller may see (its ``tools/list``, every page), kept."""
        if served.backend is None:
            view = await view_of(served, ctx)
            definitions, private = visible_definitions(served, ctx, "tools", view)
            key: tuple[Any, ...] = (
                "own",
                self.version,
                tuple(id(tool) for tool in served.registry.tools.values()),
                frozenset(d["name"] for d in definitions),
            )
            kept = self._kept.get(key)
            if kept is None:
                kept = _Entry(self._searchable(definitions), private, 0.0)
                self._keep(key, kept)
            return kept
        key = (
            "backend",
            self.version,
            None if ctx.scopes is None else frozenset(ctx.scopes),
            _declared(ctx),
        )
        kept = self._kept.get(key)
        now = time.monotonic()
        if kept is None or now - kept.read_at > self.max_age:
            # The backend lists in the caller's revision's shape; kept in the content one.
            listed = encoder_of(ctx.revision).authored(await _listed(served, ctx))
            kept = _Entry(self._searchable(listed), True, now)
            self._keep(key, kept)
        return kept

    def _searchable(self, definitions: Sequence[Any]) -> list[dict[str, Any]]:
        """The catalog's definitions, the two tools of the search left out (a tool of the
        catalog by either name would be shadowed by them)."""
        ours = (self.search_tool, self.call_tool)
        return [
            dict(d)
            for d in definitions
            if isinstance(d, Mapping) and isinstance(d.get("name"), str) and d["name"] not in ours
        ]

    def _keep(self, key: tuple[Any, ...], entry: _Entry) -> None:
        self._kept[key] = entry
        self._kept.move_to_end(key)
        while len(self._kept) > _KEPT:
            self._kept.popitem(last=False)


async def _plain(served: ServerOffering, ctx: Context, params: Mapping[str, Any]) -> Outcome:
    """``tools/call`` as the server answers it without search (``served`` is a copy made
    with ``search_with(None)``)."""
    outcome = await served.methods["tools/call"](served, ctx, params)
    if isinstance(outcome, (dict, InputRequired)):
        return outcome
    raise McpError("tools/call answered a stream")  # pragma: no cover - never a listen


async def _listed(served: ServerOffering, ctx: Context) -> list[Any]:
    """Every tool a backend lists for this caller, its pages read through."""
    listing = refilled(ctx, request_method="tools/list", request_params={})
    items: list[Any] = []
    cursor: Any = None
    for _ in range(_MAX_PAGES):
        outcome = await forwarded(served, listing, {} if cursor is None else {"cursor": cursor})
        if not isinstance(outcome, dict):
            break
        result = jsonrpc.decode_passthrough({"result": outcome})["result"]
        page_items = result.get("tools")
        items += page_items if isinstance(page_items, list) else []
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return items


def _tool_error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}
