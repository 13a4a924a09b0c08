"""``snodo proxy --tool-search``: a plain server's 150 tools, behind a proxy that searches
them (the backend a stdio process, the proxy served over HTTP)."""

from __future__ import annotations

import asyncio

from snodo.client import Client
from tests.support.processes import SNODO, serving

BACKEND = [*SNODO, "run", "tests/search/catalog_server.py:plain", "--transport", "stdio"]


def test_snodo_proxy_searches_the_tools_of_its_backend() -> None:
    def command(port: int) -> list[str]:
        return [
            *SNODO,
            "proxy",
            "--transport",
            "http",
            "--port",
            str(port),
            "--tool-search-results",
            "3",
            "--always-visible",
            "geocode",
            "--",
            *BACKEND,
        ]

    async def scenario(url: str) -> tuple[list[str], list[str], str]:
        async with Client.http(url) as client:
            listed = [tool.name for tool in await client.list_tools()]
            found = [tool.name for tool in await client.search_tools("list the open PRs")]
            called = await client.call_tool("call_tool", {"name": found[0], "arguments": {}})
            return listed, found, "".join(block.text for block in called.content)

    with serving(command) as proxy:
        listed, found, called = asyncio.run(asyncio.wait_for(scenario(f"{proxy.base}/mcp"), 60))
    assert listed == ["geocode", "search_tools", "call_tool"]
    assert found[0] == "github_list_pull_requests" and len(found) <= 3
    assert called.startswith("Invalid arguments for tool github_list_pull_requests")
