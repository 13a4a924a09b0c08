"""``Client.search_tools(query)``: the tools that fit a task, by whatever the server offers.

In order: a server offering the tool search extension (``io.snodo/tool-search``) is
asked with ``tools/catalog`` and the entries found are described with
``tools/describe`` (SEP-2636), or, if it lists only a ``query`` on ``tools/list``
(SEP-1821), with that; a server that lists a ``search_tools`` tool (snodo's
``ToolSearch``, FastMCP's search transforms) has it called, its answer read from
``structuredContent`` (under ``tools``, or FastMCP's ``result``) or its text. Failing
all three, the client lists the tools and searches them itself with snodo's engine (the
``snodo[search]`` extra). Whichever way, what comes back is the full definitions of the
tools found, best first (none when nothing fits), checked as ``list_tools`` checks
them, and remembered so that their calls carry their headers and results are checked
against their output schemas.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

from snodo.client.checks import OutputSchemas, listed_tool
from snodo.client.connection import Connection
from snodo.client.errors import ProtocolViolation
from snodo.client.requester import Requester
from snodo.client.results import validated
from snodo.core.http_headers import valid_header_params
from snodo.revisions.authoring import Tool

__all__ = ["EXTENSION_ID", "SEARCH_TOOL", "ToolFinder"]

EXTENSION_ID: Final = "io.snodo/tool-search"
"""The experimental extension of SEP-2636 and SEP-1821 (``snodo.search.disclosure``)."""
SEARCH_TOOL: Final = "search_tools"


class ToolFinder:
    """What ``Client.search_tools`` delegates to. It sends with the Client's
    ``Requester``, lists and calls through the Client's own ``list_tools`` and
    ``call_tool`` (so what they check and remember holds here too), and keeps what it
    finds in the ``connection`` and the ``outputs`` as a listing does."""

    def __init__(
        self,
        requester: Requester,
        connection: Connection,
        outputs: OutputSchemas,
        list_tools: Callable[[], Awaitable[Sequence[Tool]]],
        call_tool: Callable[[str, Mapping[str, Any]], Awaitable[Any]],
    ) -> None:
        self.requester = requester
        self.connection = connection
        self.outputs = outputs
        self.list_tools = list_tools
        self.call_tool = call_tool

    async def search(self, query: str, *, limit: int = 5) -> list[Tool]:
        """The tools that fit ``query``, best first, full definitions; [] when none fits."""
        send, until = self.requester.send, self.requester.until()
        described = await send("server/discover", {}, until=until)
        capabilities = described.get("capabilities")
        extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
        settings = extensions.get(EXTENSION_ID) if isinstance(extensions, dict) else None
        found: list[Any]
        if isinstance(settings, dict) and "tools/catalog" in (settings.get("methods") or ()):
            entries = await send("tools/catalog", {"query": query}, until=until)
            names = [e.get("name") for e in _objects(entries, "tools")][:limit]
            found = []
            if names:
                answered = await send("tools/describe", {"names": names}, until=until)
                found = _objects(answered, "tools")
        elif isinstance(settings, dict) and settings.get("listQuery"):
            found = _objects(await send("tools/list", {"query": query}, until=until), "tools")
        else:
            listed = await self.list_tools()
            if any(tool.name == SEARCH_TOOL for tool in listed):
                found = _searched(await self.call_tool(SEARCH_TOOL, {"query": query}))
            else:
                found = _here(listed, query, limit)
        return self._learned(found[:limit])

    def _learned(self, found: list[Any]) -> list[Tool]:
        """The definitions as ``Tool`` models, those with a bad ``x-mcp-header`` left out
        (as ``list_tools`` leaves them), remembered for their calls."""
        kept: list[tuple[Tool, dict[str, Any]]] = []
        for raw in found:
            if not isinstance(raw, dict) or not isinstance(raw.get("inputSchema"), dict):
                raise ProtocolViolation("a tool found by search_tools has no input schema")
            tool = validated(Tool, listed_tool(raw))
            if valid_header_params(raw["inputSchema"]):
                kept.append((tool, raw))
        schemas = dict(self.connection.tool_schemas)
        schemas.update({tool.name: raw["inputSchema"] for tool, raw in kept})
        self.connection.tool_schemas = schemas
        self.outputs.learn(raw for _, raw in kept)
        return [tool for tool, _ in kept]


def _objects(result: Mapping[str, Any], key: str) -> list[Any]:
    items = result.get(key)
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ProtocolViolation(f"the server's answer has no list of {key}")
    return items


def _searched(result: Any) -> list[Any]:
    """The tools a ``search_tools`` tool answered: structured content under ``tools``
    (snodo) or ``result`` (FastMCP), else the JSON of its text."""
    if getattr(result, "is_error", False):
        raise ProtocolViolation(f"{SEARCH_TOOL} failed: {_text(result)}")
    structured = getattr(result, "structured_content", None)
    if isinstance(structured, dict):
        for key in ("tools", "result"):
            if isinstance(structured.get(key), list):
                return list(structured[key])
    try:
        decoded = json.loads(_text(result))
    except ValueError:
        raise ProtocolViolation(f"{SEARCH_TOOL} answered no tools") from None
    if isinstance(decoded, dict):
        decoded = decoded.get("tools")
    if not isinstance(decoded, list):
        raise ProtocolViolation(f"{SEARCH_TOOL} answered no tools")
    return decoded


def _text(result: Any) -> str:
    blocks = getattr(result, "content", None) or []
    return "".join(getattr(block, "text", "") or "" for block in blocks)


def _here(listed: Sequence[Tool], query: str, limit: int) -> list[Any]:
    """The server searches nothing: its tools searched here, with snodo's engine."""
    from snodo.search.engine import Lexical  # noqa: PLC0415 (the search extra)

    definitions = [
        tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed
    ]
    by_name = {d["name"]: d for d in definitions}
    hits = Lexical().index(definitions).search(query, limit)
    return [by_name[hit.name] for hit in hits]
