"""The benchmark's catalog (bench/search_catalog.py), for tests, and servers made of it."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from typing import Any

from snodo import Server
from snodo.search import ToolSearch
from tests.support.paths import ROOT


def _load() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location(
        "search_catalog_for_tests", ROOT / "bench" / "search_catalog.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tools: list[dict[str, Any]] = module.TOOLS
    return tools


TOOLS = _load()
"""150 tool definitions, as tools/list shows them."""


def add_tools(server: Server, tools: Iterable[dict[str, Any]], **options: Any) -> None:
    """Register each tool; calling one answers ``NAME ran with a, b``."""
    for defined in tools:
        name = defined["name"]

        def ran(_name: str = name, **given: Any) -> str:
            return f"{_name} ran with {', '.join(sorted(given)) or 'nothing'}"

        server.add_tool(
            ran,
            name=name,
            title=defined.get("title"),
            description=defined["description"],
            input_schema=defined["inputSchema"],
            inline=True,
            **options,
        )


def catalog_server(search: ToolSearch | None = None, **server_options: Any) -> Server:
    """A server with the 150 tools, searching them when ``search`` is given."""
    server = Server("catalog", "1.0.0", tool_search=search, **server_options)
    add_tools(server, TOOLS)
    return server
