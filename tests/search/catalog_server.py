"""The benchmark's 150 tools behind a tool search, for clients in other processes:
``snodo run tests/search/catalog_server.py:server --transport http``. Each tool
answers ``NAME ran with ...``; ``refund_payment`` needs the ``billing`` scope."""

from __future__ import annotations

from snodo import Server
from snodo.search import ToolSearch
from tests.search.catalog import TOOLS, add_tools

server = Server("catalog", "1.0.0", tool_search=ToolSearch(always_visible=["get_balance"]))
add_tools(server, TOOLS)
