"""FastMCP 4.2.3's ``BM25SearchTransform`` over the benchmark's catalog, for ``tool_search.py``.

Run under FastMCP's own interpreter (``.venv-fastmcp/bin/python``), never imported by
snodo: ``tool_search.py`` starts it, writes the queries to its stdin as a JSON list of
strings, and reads one JSON object from its stdout: the names each search returned, in
order; the CPU per search through the server's call path (``FastMCP.call_tool``, which
lists the catalog again and ranks it) and of the ranking alone; the bytes of
``tools/list`` without and with the transform.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.tools import Tool, ToolResult

sys.path.insert(0, str(Path(__file__).parent))

from search_catalog import TOOLS


class Listed(Tool):
    """A tool defined by its JSON Schema, as a catalog lists it."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(content=f"{self.name} ran")


def server(search: bool) -> tuple[FastMCP, BM25SearchTransform | None]:
    mcp = FastMCP("catalog")
    for defined in TOOLS:
        mcp.add_tool(
            Listed(
                name=defined["name"],
                title=defined.get("title"),
                description=defined["description"],
                parameters=defined["inputSchema"],
            )
        )
    transform = None
    if search:
        transform = BM25SearchTransform(max_results=5)
        mcp.add_transform(transform)
    return mcp, transform


async def list_bytes(mcp: FastMCP) -> int:
    tools = await mcp.list_tools()
    dumped = [
        t.to_mcp_tool().model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools
    ]
    return len(json.dumps({"tools": dumped}, separators=(",", ":"), ensure_ascii=False).encode())


def names_of(result: ToolResult) -> list[str]:
    structured = result.structured_content
    found: Any = structured.get("result") if isinstance(structured, dict) else None
    if found is None:  # no structured content: the text block is the same JSON
        text = result.content[0].text if result.content else "[]"  # type: ignore[union-attr]
        found = json.loads(text)
    return [item["name"] for item in found] if isinstance(found, list) else []


async def main() -> None:
    queries: list[str] = json.loads(sys.stdin.read())
    plain, _ = server(search=False)
    searched, transform = server(search=True)
    assert transform is not None
    report: dict[str, Any] = {
        "list_bytes_full": await list_bytes(plain),
        "list_bytes_search": await list_bytes(searched),
    }
    found = [names_of(await searched.call_tool("search_tools", {"query": q})) for q in queries]
    report["results"] = found
    rounds = max(1, 2000 // len(queries))
    began = time.process_time()
    for _ in range(rounds):
        for query in queries:
            await searched.call_tool("search_tools", {"query": query})
    report["call_ms"] = (time.process_time() - began) * 1000 / (rounds * len(queries))
    catalog = [t for t in await plain.list_tools()]
    began = time.process_time()
    for _ in range(rounds):
        for query in queries:
            await transform._search(catalog, query)
    report["rank_ms"] = (time.process_time() - began) * 1000 / (rounds * len(queries))
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
