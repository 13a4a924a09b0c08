"""The benchmark's 150 tools behind a tool search, for clients in other processes:
``snodo run tests/search/catalog_server.py:server --transport http``; ``plain`` serves
them all listed. Each tool answers ``NAME ran with ...``."""

from __future__ import annotations

from snodo import Server
from snodo.search import ToolSearch
from tests.search.catalog import TOOLS, add_tools

server = Server("catalog", "1.0.0", tool_search=ToolSearch(always_visible=["get_balance"]))
add_tools(server, TOOLS)

plain = Server("plain-catalog", "1.0.0")
add_tools(plain, TOOLS)
