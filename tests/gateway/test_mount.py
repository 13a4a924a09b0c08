"""``mount``: a server inside another, under a prefix. Names, collisions refused at mount
time, list changes reaching the outer server's listeners, an MRTR round of the mounted
server through the outer one (in process, and a legacy session over HTTP through the
bridge), resources routed by URI, completion and prompts by name."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from snodo import Client, Limits, Server
from snodo.client import RequestError
from snodo.client.transports import MemoryTransport
from snodo.gateway import mount
from snodo.server.lifespan import StartupFailed
from tests.gateway.mounted_server import make
from tests.support.processes import serving, snodo_run


def _answer(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"city": "Oslo"}}


def test_names_rounds_resources_and_prompts_through_the_outer_server() -> None:
    main, _ = make()
    rounds: list[str] = []

    async def scenario() -> None:
        async with Client(MemoryTransport(main), elicitation=_answer) as client:
            assert [tool.name for tool in await client.list_tools()] == [
                "hello",
                "weather_forecast",
            ]
            flow = await client.call_tool("weather_forecast", {"days": 2}, manual=True)
            rounds.append(type(flow).__name__)  # the question came back as a round
            result = await client.call_tool("weather_forecast", {"days": 2})
            assert result.content[0].text == "Oslo: sunny for 2 days"  # type: ignore[union-attr]
            assert (await client.call_tool("hello")).content[0].text == "hi"  # type: ignore[union-attr]
            uris = sorted(resource.uri for resource in await client.list_resources())
            assert uris == ["main://about", "weather://stations"]
            read = await client.read_resource("weather://stations")
            assert read.contents[0].text == "Oslo, Bergen"  # type: ignore[union-attr]
            read = await client.read_resource("main://about")
            assert read.contents[0].text == "the main server"  # type: ignore[union-attr]
            assert [prompt.name for prompt in await client.list_prompts()] == ["weather_ask"]
            got = await client.get_prompt("weather_ask", {"city": "Bergen"})
            assert got.messages[0].content.text == "How is the weather in Bergen?"  # type: ignore[union-attr]
            with pytest.raises(RequestError) as unknown:  # as the mounted server says it
                await client.call_tool("weather_nothing")
            assert unknown.value.code == -32602

    asyncio.run(asyncio.wait_for(scenario(), 30))
    assert rounds == ["Flow"]


def test_collisions_and_bad_prefixes_are_refused_at_mount_time() -> None:
    main, weather = make()
    with pytest.raises(ValueError, match="already mounted"):
        mount(main, Server("other", "1"), prefix="weather")
    clash = Server("clash", "1")

    @clash.tool
    def hello() -> str:
        """Served as extra_hello: no clash with the main server's hello."""
        return "hi"

    @clash.resource("weather://stations")
    def stations() -> str:
        """The same URI as the weather server's."""
        return "again"

    with pytest.raises(ValueError, match="weather://stations"):
        mount(main, clash, prefix="extra")
    own = Server("own", "1")

    @own.tool(name="weather_forecast")
    def taken() -> str:
        """A name the mounted weather server's forecast would take."""
        return "mine"

    with pytest.raises(ValueError, match="weather_forecast"):
        mount(own, weather, prefix="weather")
    for bad in ("", "with_underscore", "-dash", "a" * 65, "sp ace"):
        with pytest.raises(ValueError, match="prefix"):
            mount(Server("x", "1"), Server("y", "1"), prefix=bad)
    with pytest.raises(ValueError, match="itself"):
        mount(main, main, prefix="self")


def test_a_list_change_in_the_mounted_server_reaches_the_outer_listeners() -> None:
    main, weather = make()
    heard: list[str] = []

    async def scenario() -> list[str]:
        async with Client(MemoryTransport(main)) as client:
            await client.list_tools()

            async def listen() -> None:
                async for note in client.listen(toolsListChanged=True):
                    heard.append(str(note.get("method")))
                    if note.get("method") == "notifications/tools/list_changed":
                        return

            listening = asyncio.create_task(listen())
            await asyncio.sleep(0.2)

            @weather.tool
            def later() -> str:
                """Registered after the outer server started."""
                return "later"

            await asyncio.wait_for(listening, 10)
            return [tool.name for tool in await client.list_tools()]

    names = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert "notifications/tools/list_changed" in heard
    assert names == ["hello", "weather_forecast", "weather_later"]


def test_a_legacy_session_gets_the_mounted_servers_question_through_the_bridge() -> None:
    target = "tests/gateway/mounted_server.py:server"

    async def scenario(url: str) -> str:
        async with Client.http(url, era="legacy", elicitation=_answer) as client:
            result = await client.call_tool("weather_forecast", {"days": 3})
            assert client.era == "legacy"
            return result.content[0].text  # type: ignore[union-attr]

    with serving(lambda port: snodo_run(target, "http", "--port", str(port))) as server:
        text = asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 30))
    assert text == "Oslo: sunny for 3 days"


def test_own_items_are_listed_whole_and_clashing_names_refused() -> None:
    """With a page size the merged list still holds every own item (paged once, by
    the outer server); an own name that starts with a member's prefix is refused at
    mount, and, registered after the mount, when the server starts."""
    main = Server("main", "1.0.0", limits=Limits(page_size=2))
    for name in ("one", "two", "three"):
        main.add_tool(lambda: "own", name=name)
    weather = Server("weather", "1.0.0")
    weather.add_tool(lambda: "theirs", name="report")
    mount(main, weather, prefix="weather")

    async def listed() -> list[str]:
        async with Client(MemoryTransport(main)) as client:
            return [tool.name for tool in await client.list_tools()]

    names = asyncio.run(asyncio.wait_for(listed(), 30))
    assert sorted(names) == ["one", "three", "two", "weather_report"]
    clashing = Server("clashing", "1.0.0")
    clashing.add_tool(lambda: "mine", name="weather_report")
    with pytest.raises(ValueError, match="starts with 'weather'_"):
        mount(clashing, Server("weather", "1.0.0"), prefix="weather")
    late = Server("late", "1.0.0")
    mount(late, Server("weather", "1.0.0"), prefix="weather")
    late.add_tool(lambda: "mine", name="weather_later")

    async def start() -> None:
        async with Client(MemoryTransport(late)) as client:
            await client.list_tools()

    with pytest.raises(StartupFailed, match="weather_later"):
        asyncio.run(asyncio.wait_for(start(), 30))


def test_nothing_is_mounted_in_a_proxy_and_merged_lists_are_private() -> None:
    from snodo.gateway import proxy

    made = proxy(lambda **options: Client(MemoryTransport(Server("b", "1")), **options))
    with pytest.raises(ValueError, match="already serves another server"):
        mount(made, Server("x", "1"), prefix="x")
    main, _ = make()

    async def scope() -> str | None:
        async with Client(MemoryTransport(main)) as client:
            return (await client.list_tools()).cache_scope

    assert asyncio.run(asyncio.wait_for(scope(), 30)) == "private"
