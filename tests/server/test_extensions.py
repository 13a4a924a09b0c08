"""An in-house extension through the public API (tests/server/extension_server.py), both
eras, over real HTTP: advertised with its settings, its method answered with its params
checked by its model, its notification delivered on the request's stream, the client's
declaration seen by the handler; an unknown method still -32601."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from snodo.client import Client, RequestError
from snodo.server.extensions import Extension
from tests.support.processes import serving, snodo_run

TARGET = "tests/server/extension_server.py:server"
ECHO = "com.example/echo"


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_an_extension_in_both_eras(era: str) -> None:
    heard: list[dict[str, Any]] = []

    async def scenario(url: str) -> None:
        declared = Client.http(url, era=era, extensions={ECHO: {}}, on_notification=heard.append)
        async with declared as client:
            assert await client.server_supports(ECHO)
            assert not await client.server_supports("com.example/other")
            found = await client.discover()
            assert found.capabilities.extensions[ECHO] == {"loud": True}  # type: ignore[index]
            said = await client.request("echo/say", {"text": "hi", "times": 2})
            assert said["text"] == "hi hi" and said["declared"] is True
            with pytest.raises(RequestError) as refused:
                await client.request("echo/say", {"text": ""})
            assert refused.value.code == -32602
            assert "text" in refused.value.message
            with pytest.raises(RequestError) as unknown:
                await client.request("echo/shout", {"text": "hi"})
            assert unknown.value.code == -32601
        async with Client.http(url, era=era) as plain:
            said = await plain.request("echo/say", {"text": "hi"})
            assert said["declared"] is False

    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 30))
    lengths = [note["params"]["length"] for note in heard if note.get("method") == "echo/heard"]
    assert lengths[:1] == [2], heard


def test_registration_refuses_what_would_clash() -> None:
    with pytest.raises(ValueError, match=r"vendor\.example/name"):
        Extension("echo")
    extension = Extension("com.example/x")
    with pytest.raises(ValueError, match="namespace of its own"):
        extension.method("tools/call", params=BaseModel)


@pytest.mark.parametrize(
    "name",
    ["tools/validate", "completion/suggest", "sampling/x", "roots/x", "notifications/x", "ping"],
)
def test_an_extension_method_is_refused_in_every_core_namespace(name: str) -> None:
    """Every namespace a pinned revision names a method or notification in is the
    core's (read from the revisions, not listed by hand); the refusal says how a request
    a core revision adds is served instead."""
    with pytest.raises(ValueError) as refused:
        Extension("com.example/x").method(name, params=BaseModel)
    assert "namespace of its own" in str(refused.value)
    assert f"server.method({name!r})" in str(refused.value)


def test_an_extension_method_in_its_own_namespace_is_taken() -> None:
    extension = Extension("com.example/x")
    extension.method("notes/pin", params=BaseModel)(lambda ctx, params: {})
    assert set(extension.methods) == {"notes/pin"}


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_tasks_is_an_extension_like_any_other(era: str) -> None:
    """``Server(extensions=[Tasks(...)])`` offers the tasks extension through the same API: its
    methods are the registry's, advertised in both eras, answered for modern requests
    (an unknown task: -32602 from the engine) and not routed for legacy sessions, where
    the revision's own tasks/get means something else (-32601)."""
    from snodo.server.extensions import ExtensionMethod
    from snodo_wire_tasks.protocol import EXTENSION_ID
    from tests.extensions.tasks.client_server import make

    registry = make().registry
    assert set(registry.extension_methods) == {"tasks/get", "tasks/update", "tasks/cancel"}
    assert all(isinstance(m, ExtensionMethod) for m in registry.extension_methods.values())
    assert registry.modern_methods == set(registry.extension_methods)

    async def scenario(url: str) -> None:
        async with Client.http(url, era=era, extensions={EXTENSION_ID: {}}) as client:
            assert await client.server_supports(EXTENSION_ID)
            with pytest.raises(RequestError) as refused:
                await client.request("tasks/get", {"taskId": "no-such-task"})
            assert refused.value.code == (-32602 if era == "modern" else -32601)

    target = "tests/extensions/tasks/client_server.py:server"
    with serving(lambda port: snodo_run(target, "http", "--port", str(port))) as server:
        asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 30))
