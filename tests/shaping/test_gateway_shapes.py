"""What a gateway takes of a backend and how it offers it (``snodo.gateway.Shape``): a
proxy and a mount in process, literal wire JSON, in both eras; ``snodo proxy`` with its
options and a shape file, as real processes."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from snodo.client import Client, RequestError
from snodo.client.transports import MemoryTransport
from snodo.gateway import Shape, mount, proxy
from snodo.server import Server
from snodo.server.transforms import ToolShape
from tests.middleware.support import LegacyPeer, ask, call, synchronous
from tests.shaping import backend_server
from tests.support.processes import serving
from tests.support.wire import meta

SHAPE = Shape.of(
    exclude=["admin_*", "secret://*"],
    rename={"summarize": "digest"},
    tools={
        "search": ToolShape(
            name="find",
            description="Find products.",
            hide={"tenant": lambda ctx: f"tenant-of-{ctx.principal}"},
            rename={"query": "text"},
        )
    },
)


def front(shape: Shape = SHAPE) -> Server:
    return proxy(
        lambda **options: Client(MemoryTransport(backend_server.server), **options), shape=shape
    )


@synchronous
async def test_a_proxy_lists_and_answers_as_its_shape_says() -> None:
    server = front()
    await server.startup()
    try:
        tools = (await ask(server, "tools/list"))["result"]["tools"]
        assert [tool["name"] for tool in tools] == ["find", "whoami"]
        assert tools[0]["description"] == "Find products."
        assert tools[0]["inputSchema"]["properties"] == {
            "text": {"type": "string"},
            "limit": {"default": 10, "type": "integer"},
        }
        assert tools[0]["inputSchema"]["required"] == ["text"]
        reply = await server.handle(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {
                    "_meta": meta(),
                    "name": "find",
                    "arguments": {"text": "tea", "limit": 2},
                },
            },
            principal="ada",
        )
        assert reply.response is not None
        assert reply.response["result"]["content"] == [
            {"type": "text", "text": "2 results for 'tea' in tenant-of-ada"}
        ]
        for hidden in ("search", "admin_reset", "admin_audit"):
            assert (await call(server, hidden))["error"] == {
                "code": -32602,
                "message": f"Unknown tool: {hidden}",
            }
        prompts = (await ask(server, "prompts/list"))["result"]["prompts"]
        assert [prompt["name"] for prompt in prompts] == ["digest"]
        got = await ask(server, "prompts/get", {"name": "digest", "arguments": {"text": "t"}})
        assert got["result"]["messages"][0]["content"]["text"] == "Summarize: t"
        assert "error" in await ask(server, "prompts/get", {"name": "summarize", "arguments": {}})
        resources = (await ask(server, "resources/list"))["result"]["resources"]
        assert [r["uri"] for r in resources] == ["docs://public"]
        secret = await ask(server, "resources/read", {"uri": "secret://keys"})
        assert secret["error"]["data"] == {"uri": "secret://keys"}
        completed = await ask(
            server,
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "digest"},
                "argument": {"name": "text", "value": "x"},
            },
        )
        assert completed["result"]["completion"]["values"] == ["x-one", "x-two"]
    finally:
        await server.shutdown()


@synchronous
async def test_a_legacy_client_of_a_shaped_proxy() -> None:
    server = front()
    await server.startup()
    try:
        peer = LegacyPeer(server, principal="bo")
        await peer.initialize()
        listed = await peer.ask("tools/list")
        assert [t["name"] for t in listed["result"]["tools"]] == ["find", "whoami"]
        found = await peer.call("find", text="tea")
        assert found["result"]["content"][0]["text"] == "10 results for 'tea' in tenant-of-bo"
        refused = await peer.call("admin_reset", confirm=True)
        assert refused["error"]["message"] == "Unknown tool: admin_reset"
    finally:
        await server.shutdown()


@synchronous
async def test_a_mount_takes_its_shape_before_its_prefix() -> None:
    server = Server("front", "1.0.0")

    @server.tool(inline=True)
    def local() -> str:
        return "local"

    mount(server, backend_server.server, prefix="shop", shape=SHAPE)
    await server.startup()
    try:
        tools = (await ask(server, "tools/list"))["result"]["tools"]
        assert [tool["name"] for tool in tools] == ["local", "shop_find", "shop_whoami"]
        found = await call(server, "shop_find", text="jam")
        assert found["result"]["content"][0]["text"] == "10 results for 'jam' in tenant-of-None"
        assert "error" in await call(server, "shop_admin_audit")
        prompts = (await ask(server, "prompts/list"))["result"]["prompts"]
        assert [prompt["name"] for prompt in prompts] == ["shop_digest"]
    finally:
        await server.shutdown()


def test_a_shape_from_json_and_what_it_refuses() -> None:
    shape = Shape.from_json(
        {
            "include": ["search", "docs://*"],
            "rename": {"search": "lookup"},
            "tools": {"search": {"hide": {"tenant": "acme"}, "rename": {"query": "q"}}},
        }
    )
    assert shape.names("tools", ["search", "whoami"]) == ["lookup"]
    assert shape.backend_name("lookup") == "search"
    assert shape.backend_name("search") is None
    with pytest.raises(ValueError, match="no shrink"):
        Shape.from_json({"shrink": True})
    with pytest.raises(ValueError, match="is not one"):
        Shape.from_json({"tools": {"search": {"size": 1}}})
    with pytest.raises(ValueError, match="one name"):
        Shape.of(rename={"a": "c", "b": "c"})


def test_snodo_proxy_with_its_shape_options(tmp_path: Path) -> None:
    shape_file = tmp_path / "shape.json"
    shape_file.write_text(
        json.dumps({"tools": {"search": {"name": "find", "hide": {"tenant": "acme"}}}})
    )
    backend = [sys.executable, "-m", "snodo", "run", "tests/shaping/backend_server.py:server"]
    command = [
        sys.executable,
        "-m",
        "snodo",
        "proxy",
        "--exclude",
        "admin_*",
        "--rename",
        "whoami=me",
        "--shape",
        str(shape_file),
        "--transport",
        "http",
        "--port",
    ]
    with serving(lambda port: [*command, str(port), "--", *backend]) as served:

        async def scenario() -> tuple[list[str], str, str]:
            async with Client.http(f"{served.base}/mcp") as client:
                names = [tool.name for tool in await client.list_tools()]
                found = await client.call_tool("find", {"query": "tea"})
                try:
                    await client.call_tool("admin_audit")
                except RequestError as exc:
                    refused = exc.message
                else:
                    refused = "answered"
                return names, found.content[0].text, refused  # type: ignore[union-attr]

        names, found, refused = asyncio.run(scenario())
    assert names == ["find", "me"]
    assert found == "10 results for 'tea' in acme"
    assert refused == "Unknown tool: admin_audit"
