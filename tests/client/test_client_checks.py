"""What the client checks of what a server sends, and of what its own handlers answer:
structuredContent against the listed outputSchema, icons from safe schemes only, an
accepted form against its schema, roots as file:// URIs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from snodo.client import Client, OutputMismatch
from snodo.extensions.tasks import TasksClient
from tests.client.hostile import Scripted, stdio_script

COUNTED = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def listing(**tool: Any) -> dict[str, Any]:
    defined = {"name": "count", "inputSchema": {"type": "object"}, **tool}
    return {"result": {"resultType": "complete", "tools": [defined]}}


def called(**result: Any) -> dict[str, Any]:
    return {"result": {"resultType": "complete", "content": [], **result}}


def run_tool(*responses: dict[str, Any]) -> Any:
    async def main() -> Any:
        client = Client(Scripted(*responses), era="modern")
        await client.list_tools()
        return await client.call_tool("count")

    return asyncio.run(main())


def test_structured_content_outside_the_listed_schema_is_refused_naming_where() -> None:
    with pytest.raises(OutputMismatch) as raised:
        run_tool(listing(outputSchema=COUNTED), called(structuredContent={"n": "many"}))
    assert str(raised.value) == (
        'tool count sent structuredContent outside its outputSchema: "many" is not of type'
        ' "integer" at /n'
    )


def test_a_declared_schema_with_no_structured_content_is_refused() -> None:
    with pytest.raises(
        OutputMismatch, match="declares an outputSchema but sent no structuredContent"
    ):
        run_tool(listing(outputSchema=COUNTED), called())


def test_a_result_that_fits_and_an_error_result_pass() -> None:
    good = run_tool(listing(outputSchema=COUNTED), called(structuredContent={"n": 3}))
    assert good.structured_content == {"n": 3}
    failed = run_tool(listing(outputSchema=COUNTED), called(isError=True))
    assert failed.is_error is True


def test_icons_from_unsafe_schemes_are_dropped() -> None:
    icons = [
        {"src": "https://example.com/a.png"},
        {"src": "data:image/png;base64,iVBORw0KGgo="},
        {"src": "http://example.com/plain.png"},
        {"src": "javascript:alert(1)"},
        {"src": "file:///etc/passwd"},
    ]

    async def main() -> Any:
        client = Client(Scripted(listing(icons=icons)), era="modern")
        return await client.list_tools()

    (tool,) = asyncio.run(main())
    assert [icon.src for icon in tool.icons] == [
        "https://example.com/a.png",
        "data:image/png;base64,iVBORw0KGgo=",
    ]


FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "How many?",
        "requestedSchema": COUNTED,
    },
}
ASKING = {
    "result": {"resultType": "input_required", "inputRequests": {"k": FORM}, "requestState": "s"}
}


def test_a_handler_answer_that_does_not_fit_the_form_never_leaves() -> None:
    transport = Scripted(ASKING, called())

    def user(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"n": "three"}}

    async def main() -> None:
        client = Client(transport, era="modern", elicitation=user)
        await client.call_tool("count")

    with pytest.raises(ValueError, match="does not fit the form") as raised:
        asyncio.run(main())
    assert "three" not in str(raised.value)  # the reason, never the value
    assert len(transport.sent) == 1  # the answer was not sent


def test_a_roots_handler_must_answer_file_uris() -> None:
    asking = {
        "result": {
            "resultType": "input_required",
            "inputRequests": {"r": {"method": "roots/list"}},
            "requestState": "s",
        }
    }
    transport = Scripted(asking, called())

    def roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": "https://example.com/repo"}]}

    async def main() -> None:
        await Client(transport, era="modern", roots=roots).call_tool("count")

    with pytest.raises(ValueError, match="not a file:// URI"):
        asyncio.run(main())
    assert len(transport.sent) == 1


UNSAFE_ICONS = [
    {"src": "https://example.com/a.png"},
    {"src": "javascript:alert(1)"},
    {"src": "http://example.com/plain.png"},
    {"src": "data:image/png;base64,iVBORw0KGgo="},
    {"src": "file:///etc/passwd"},
]
SAFE_SRCS = ["https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo="]
SERVER_INFO = {"name": "hostile", "version": "1", "icons": UNSAFE_ICONS}
STAMP = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
LINK = {"type": "resource_link", "uri": "file:///x", "name": "x", "icons": UNSAFE_ICONS}


def srcs(icons: Any) -> list[str]:
    return [icon["src"] for icon in icons]


def test_icons_of_unsafe_schemes_never_leave_the_client_in_any_result() -> None:
    discovered = {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}, "prompts": {}},
        "_meta": STAMP,
    }
    called_ = {"resultType": "complete", "content": [LINK], "_meta": STAMP}
    prompt = {
        "resultType": "complete",
        "messages": [{"role": "user", "content": LINK}],
        "_meta": STAMP,
    }
    listed = {"resultType": "complete", "tools": [], "_meta": STAMP}
    transport = Scripted(
        {"result": discovered}, {"result": called_}, {"result": prompt}, {"result": listed}
    )

    async def main() -> list[Any]:
        client = Client(transport, era="modern", cache=False)
        found = await client.discover()
        result = await client.call_tool("count")
        messages = await client.get_prompt("p")
        raw = await client.request("tools/list")
        return [found, result, messages, raw]

    found, result, messages, raw = asyncio.run(main())
    meta = found.model_dump(mode="json", by_alias=True)["_meta"]
    assert srcs(meta["io.modelcontextprotocol/serverInfo"]["icons"]) == SAFE_SRCS
    assert srcs(result.model_dump(mode="json", by_alias=True)["content"][0]["icons"]) == SAFE_SRCS
    assert (
        srcs(
            result.model_dump(mode="json", by_alias=True)["_meta"][
                "io.modelcontextprotocol/serverInfo"
            ]["icons"]
        )
        == SAFE_SRCS
    )
    dumped = messages.model_dump(mode="json", by_alias=True)
    assert srcs(dumped["messages"][0]["content"]["icons"]) == SAFE_SRCS
    assert srcs(raw["_meta"]["io.modelcontextprotocol/serverInfo"]["icons"]) == SAFE_SRCS
    # What the server sent is as it was: the client's copies were cleaned, not the wire.
    assert len(SERVER_INFO["icons"]) == 5


def test_a_completed_task_result_loses_its_unsafe_icons() -> None:
    created = {
        "resultType": "task",
        "taskId": "t1",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 10,
    }
    done = {
        "resultType": "complete",
        "taskId": "t1",
        "status": "completed",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttlMs": 60000,
        "result": {"resultType": "complete", "content": [LINK]},
    }

    async def main() -> Any:
        client = Client(Scripted({"result": created}, {"result": done}), era="modern")
        TasksClient(client)
        return await client.call_tool("count")

    result = asyncio.run(main())
    assert srcs(result.model_dump(mode="json", by_alias=True)["content"][0]["icons"]) == SAFE_SRCS


def test_a_legacy_server_info_loses_its_unsafe_icons(tmp_path: Path) -> None:
    initialized = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "serverInfo": SERVER_INFO,
    }
    argv = stdio_script(
        tmp_path,
        "for r in requests():\n"
        f"    send({{'jsonrpc': '2.0', 'id': r['id'], 'result': {initialized!r}}})\n",
    )

    async def main() -> tuple[Any, Any]:
        async with Client.stdio(argv, era="legacy") as client:
            found = await client.discover()
            assert client.legacy is not None
            return found, client.legacy.server

    found, kept = asyncio.run(main())
    meta = found.model_dump(mode="json", by_alias=True)["_meta"]
    assert srcs(meta["io.modelcontextprotocol/serverInfo"]["icons"]) == SAFE_SRCS
    assert srcs(kept["serverInfo"]["icons"]) == SAFE_SRCS
