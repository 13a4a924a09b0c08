"""``legacy="stateless"``: legacy clients without a session, as real processes.

Raw HTTP for the literal wire (no ``Mcp-Session-Id``, 405 for GET and DELETE, the
capabilities nothing could honour left out, a question answered with an error naming
the mode); PyPI mcp 1.30.0's client and snodo's own client in the legacy era for
whole flows; a modern client of the same server loses nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from snodo.client import Client, RequestError
from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.paths import ROOT
from tests.support.processes import Serving, serving, snodo_run

TARGET = "tests/legacy/stateless_server.py:server"
VERSION = "2025-11-25"
ACCEPT = {"accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def stateless() -> Iterator[Serving]:
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        yield server


def rpc(method: str, params: dict[str, Any], id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a JSON or an SSE response (its last event)."""
    if response.headers["content-type"].startswith("application/json"):
        return dict(response.json())
    events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    return dict(json.loads(events[-1]))


def test_the_wire_without_a_session(stateless: Serving) -> None:
    url = f"{stateless.base}/mcp"
    headers = {**ACCEPT, "mcp-protocol-version": VERSION}
    init = rpc(
        "initialize",
        {
            "protocolVersion": VERSION,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    )
    with httpx.Client(timeout=10) as http:
        opened = http.post(url, json=init, headers=ACCEPT)
        assert opened.status_code == 200
        assert "mcp-session-id" not in opened.headers
        capabilities = opened.json()["result"]["capabilities"]
        assert "listChanged" not in capabilities["tools"]
        assert "subscribe" not in capabilities.get("resources", {})
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(url, json=note, headers=headers).status_code == 202
        echoed = http.post(
            url,
            json=rpc(
                "tools/call",
                {"name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": "p"}},
            ),
            headers=headers,
        )
        assert answer_of(echoed)["result"]["content"] == [{"type": "text", "text": "hi"}]
        events = [line for line in echoed.text.splitlines() if line.startswith("data: ")]
        methods = [json.loads(e[6:]).get("method") for e in events]
        assert methods[:2] == ["notifications/progress", "notifications/message"]
        asked = answer_of(
            http.post(url, json=rpc("tools/call", {"name": "weather"}), headers=headers)
        )
        assert asked["result"]["isError"] is True
        assert "stateless mode" in asked["result"]["content"][0]["text"]
        read = answer_of(
            http.post(url, json=rpc("resources/read", {"uri": "note://asks"}), headers=headers)
        )
        assert read["error"]["code"] == -32021
        assert "stateless mode" in read["error"]["message"]
        subscribe = answer_of(
            http.post(url, json=rpc("resources/subscribe", {"uri": "note://asks"}), headers=headers)
        )
        assert subscribe["error"]["code"] == -32600
        assert http.get(url, headers={"accept": "text/event-stream"}).status_code == 405
        assert http.delete(url, headers=headers).status_code == 405


SDK_SCRIPT = """
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

async def main():
    async with streamablehttp_client(sys.argv[1]) as (read, write, session_id):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            echo = await session.call_tool("echo", {"text": "hi"})
            weather = await session.call_tool("weather", {})
            print(json.dumps({
                "version": init.protocolVersion,
                "session": session_id(),
                "echo": echo.content[0].text,
                "weather": [weather.isError, weather.content[0].text],
            }))

asyncio.run(main())
"""


def test_the_official_python_sdk_without_a_session(stateless: Serving) -> None:
    run = subprocess.run(
        [str(legacy_sdk_python()), "-c", SDK_SCRIPT, f"{stateless.base}/mcp"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["version"] == VERSION and report["session"] is None
    assert report["echo"] == "hi"
    assert report["weather"][0] is True and "stateless mode" in report["weather"][1]


def test_snodo_clients_of_both_eras(stateless: Serving) -> None:
    url = f"{stateless.base}/mcp"

    def city(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"city": "Oslo"}}

    async def main() -> None:
        async with Client.http(url, era="legacy", elicitation=city) as legacy:
            assert (await legacy.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
            assert legacy.legacy is not None
            with pytest.raises(RequestError) as refused:
                await legacy.read_resource("note://asks")
            assert refused.value.code == -32021
        async with Client.http(url, era="modern", elicitation=city) as modern:
            result = await modern.call_tool("weather")
            assert result.content[0].text == "sunny in Oslo", "MRTR needs no session"

    asyncio.run(main())


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_official_typescript_client_without_a_session(stateless: Serving) -> None:
    """interop/official_client/check_stateless.mjs, default negotiation and pinned."""
    client_dir = ROOT / "interop" / "official_client"
    if not (client_dir / "node_modules").is_dir():
        subprocess.run(["bash", str(ROOT / "scripts" / "interop"), "typed"], cwd=ROOT, check=False)
    run = subprocess.run(
        ["node", str(client_dir / "check_stateless.mjs")],
        cwd=ROOT,
        env={**os.environ, "SNODO_HTTP_URL": f"{stateless.base}/mcp"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1] == "official client (stateless): 5 passed, 0 failed"


@pytest.mark.parametrize("version", ["1999-01-01", "2026-07-28"])
def test_a_version_the_server_does_not_offer_is_400_as_on_a_session(
    stateless: Serving, version: str
) -> None:
    # Legacy basic/transports.mdx: an unsupported MCP-Protocol-Version MUST be 400.
    headers = {**ACCEPT, "mcp-protocol-version": version}
    call = rpc("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    answer = httpx.post(f"{stateless.base}/mcp", json=call, headers=headers, timeout=10)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == (
        f"Bad Request: unsupported MCP-Protocol-Version {version!r}"
    )
    # Without the header the revision's assumption stands, and the call is answered.
    answer = httpx.post(f"{stateless.base}/mcp", json=call, headers=ACCEPT, timeout=10)
    assert answer_of(answer)["result"]["content"] == [{"type": "text", "text": "hi"}]
