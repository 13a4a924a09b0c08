"""Tool search in front of other servers (``mount``, ``proxy``), and snodo's client's
``search_tools`` against each way a server may offer search: the extension
(SEP-2636), a ``search_tools`` tool only, none (searched in the client), and over HTTP
in a legacy session."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from snodo import Server
from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.gateway import mount, proxy
from snodo.search import ToolSearch
from tests.search.catalog import TOOLS, add_tools, catalog_server
from tests.support.processes import serving, snodo_run

DOMAIN = {t["name"] for t in TOOLS if t["name"].startswith(("crm_", "hr."))}


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), 60))


def text(result: Any) -> str:
    return "".join(block.text for block in result.content)


def test_a_server_searches_the_tools_of_the_servers_mounted_in_it() -> None:
    people = Server("people", "1")
    add_tools(people, [t for t in TOOLS if t["name"].startswith("hr.")])
    search = ToolSearch()
    main = Server("main", "1", tool_search=search)
    add_tools(main, [t for t in TOOLS if t["name"].startswith("crm_")])
    mount(main, people, prefix="people")

    async def scenario() -> None:
        async with Client(MemoryTransport(main)) as client:
            assert [t.name for t in await client.list_tools()] == ["search_tools", "call_tool"]
            await asyncio.sleep(0.2)  # the member's listen stream opens
            found = await client.search_tools("how many vacation days do I have left?")
            assert found[0].name == "people_hr.get_time_off_balance"
            assert found[0].input_schema.properties is not None
            mine = await client.search_tools("merge two duplicate contact records")
            assert mine[0].name == "crm_merge_contacts"
            called = await client.call_tool("people_hr.get_payslip", {"month": "2026-03"})
            assert text(called) == "hr.get_payslip ran with month"
            assert await client.search_tools("order a pepperoni pizza") == []
            # A tool the member adds later is found: its list change reaches the index.
            before = search.version
            add_tools(people, [t for t in TOOLS if t["name"] == "get_exchange_rate"])
            for _ in range(500):  # the member's notification comes on its listen stream
                if search.version != before:
                    break
                await asyncio.sleep(0.01)
            later = await client.search_tools("exchange rate between euros and dollars")
            assert later[0].name == "people_get_exchange_rate"

    run(scenario)


def test_a_proxy_searches_the_tools_of_its_backend() -> None:
    backend = catalog_server()
    front = proxy(
        lambda **options: Client(MemoryTransport(backend), **options), tool_search=ToolSearch()
    )

    async def scenario() -> None:
        async with Client(MemoryTransport(front)) as client:
            assert [t.name for t in await client.list_tools()] == ["search_tools", "call_tool"]
            found = await client.search_tools("scale the api deployment to 6 replicas")
            assert found[0].name == "k8s-scale-deployment"
            through = await client.call_tool("call_tool", {"name": "get_balance", "arguments": {}})
            assert text(through) == "get_balance ran with nothing"
            assert text(await client.call_tool("get_balance", {})) == text(through)

    run(scenario)


class Recording(MemoryTransport):
    """The in-memory transport, noting each request's method (and tool)."""

    def __init__(self, server: Server, sent: list[str]) -> None:
        super().__init__(server)
        self.sent = sent

    async def request(self, message: dict[str, Any], *args: Any) -> dict[str, Any]:
        method = message["method"]
        name = (message.get("params") or {}).get("name")
        self.sent.append(f"{method} {name}" if name else method)
        return await super().request(message, *args)


def test_the_client_uses_whichever_search_the_server_offers() -> None:
    query = "restore yesterday's backup into the staging db"
    offers = {
        "extension": catalog_server(ToolSearch()),
        "tool only": catalog_server(ToolSearch(disclosure=False)),
        "nothing": catalog_server(),
    }

    async def scenario() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for kind, server in offers.items():
            sent: list[str] = []
            transport = Recording(server, sent)
            async with Client(transport) as client:
                tools = await client.search_tools(query)
                found[kind] = [tool.name for tool in tools]
            found[f"{kind} sent"] = sent
        return found

    found = run(scenario)
    for kind in offers:
        assert found[kind][0] == "restore_database", kind
    assert found["extension sent"] == ["server/discover", "tools/catalog", "tools/describe"]
    assert found["tool only sent"] == ["server/discover", "tools/list", "tools/call search_tools"]
    assert found["nothing sent"] == ["server/discover", "tools/list"]


def test_the_client_searches_in_a_legacy_session_over_http() -> None:
    target = "tests/search/catalog_server.py:server"

    async def scenario(url: str) -> tuple[list[str], str, list[str]]:
        async with Client.http(url, era="legacy") as client:
            found = await client.search_tools("Lösche die Datei temp/cache.db")
            called = await client.call_tool(found[0].name, {"path": "temp/cache.db"})
            queried = await client.request("tools/list", {"query": "rename a file"})
            assert client.era == "legacy"
            return (
                [tool.name for tool in found],
                text(called),
                [t["name"] for t in queried["tools"]],
            )

    with serving(lambda port: snodo_run(target, "http", "--port", str(port))) as server:
        names, called, queried = run(lambda: scenario(f"{server.base}/mcp"))
    assert names[0] == "delete_file"  # through tools/catalog and tools/describe
    assert called == "delete_file ran with path"
    assert queried[0] == "move_file"
