"""Legacy sessions over real stdio and HTTP server processes, and a modern-only server.

The server is tests/legacy/servers.py, written for MRTR alone. Over stdio the first
request decides the era; over HTTP, initialize opens a session that later requests
name, and a modern request beside it stays stateless.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest

from snodo.server import Server
from snodo.server.legacy_limits import LegacyLimits
from snodo.transports.http import HttpApp
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run, stop

TARGET = "tests/legacy/servers.py:server"
MODERN_ONLY = "tests/legacy/servers.py:modern_only"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
BOTH = "application/json, text/event-stream"
REFUSAL = {
    "jsonrpc": "2.0",
    "id": 1,
    "error": {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"},
    },
}


def _stdio(target: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send each line; read one message back for each request among them."""
    process = subprocess.Popen(
        snodo_run(target, "stdio"),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        out: list[dict[str, Any]] = []
        for line in lines:
            process.stdin.write(json.dumps(line).encode() + b"\n")
            process.stdin.flush()
            if "id" in line and "method" in line:
                out.append(json.loads(process.stdout.readline()))
        return out
    finally:
        process.stdin.close()
        stop(process)
        process.stdout.close()


def test_stdio_initialize_makes_the_process_legacy() -> None:
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "sign_in"}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    initialize, called = _stdio(TARGET, [INIT, initialized, call])
    assert initialize["result"]["protocolVersion"] == "2025-11-25"
    assert "mcp-session-id" not in initialize["result"]
    # No url capability was declared at initialize: the tool says so, and nothing is
    # sent to the client (the next line would have been the elicitation request).
    assert called["id"] == 2 and called["result"]["isError"] is True


def test_stdio_legacy_flow_round_trips() -> None:
    process_lines = [INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    greet = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "greet"}}
    process = subprocess.Popen(
        snodo_run(TARGET, "stdio"),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        for line in [*process_lines, greet]:
            process.stdin.write(json.dumps(line).encode() + b"\n")
        process.stdin.flush()
        assert "result" in json.loads(process.stdout.readline())
        request = json.loads(process.stdout.readline())
        assert request["method"] == "elicitation/create" and request["id"] == 1
        answer = {"action": "accept", "content": {"name": "Ada"}}
        reply = {"jsonrpc": "2.0", "id": 1, "result": answer}
        process.stdin.write(json.dumps(reply).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline()) == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"content": [{"type": "text", "text": "Hello, Ada (round 2)"}]},
        }
    finally:
        process.stdin.close()
        stop(process)
        process.stdout.close()


def test_stdio_modern_only_names_its_versions() -> None:
    assert _stdio(MODERN_ONLY, [INIT]) == [REFUSAL]


def test_stdio_after_a_modern_request_initialize_is_refused_the_same_way() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    discover = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}}
    out = _stdio(TARGET, [discover, INIT])
    assert "result" in out[0]
    assert out[1]["error"]["code"] == -32022
    assert out[1]["error"]["data"]["requested"] == "2025-11-25"


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        yield f"{server.base}/mcp"


def _open(url: str) -> str:
    response = httpx.post(url, json=INIT, headers={"Accept": BOTH}, timeout=10)
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"
    session = response.headers["mcp-session-id"]
    assert all(0x21 <= ord(c) <= 0x7E for c in session)
    return session


def _session_headers(session: str) -> dict[str, str]:
    return {"Accept": BOTH, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}


def test_http_session_lifecycle(base: str) -> None:
    session = _open(base)
    headers = _session_headers(session)
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx.post(base, json=note, headers=headers).status_code == 202
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert httpx.post(base, json=ping, headers=headers).json() == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }
    bad_version = {**headers, "MCP-Protocol-Version": "1999-01-01"}
    assert httpx.post(base, json=ping, headers=bad_version).status_code == 400
    assert httpx.delete(base, headers=headers).status_code == 200
    gone = httpx.post(base, json=ping, headers=headers)
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == -32001
    assert httpx.delete(base, headers=headers).status_code == 404


def _open_at(url: str, version: str) -> dict[str, str]:
    hello = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}
    response = httpx.post(url, json=hello, headers={"Accept": BOTH}, timeout=10)
    assert response.json()["result"]["protocolVersion"] == version
    session = response.headers["mcp-session-id"]
    return {"Accept": BOTH, "Mcp-Session-Id": session, "MCP-Protocol-Version": version}


def test_http_a_2025_03_26_batch_is_answered_member_by_member(base: str) -> None:
    headers = _open_at(base, "2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "method": "ping"},
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "resources/read",
            "params": {"uri": "test://nowhere"},
        },
        {"jsonrpc": "2.0", "id": 9},
    ]
    response = httpx.post(base, json=batch, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == [
        {"jsonrpc": "2.0", "id": 7, "result": {}},
        {
            "jsonrpc": "2.0",
            "id": 8,
            "error": {
                "code": -32002,
                "message": "Resource not found",
                "data": {"uri": "test://nowhere"},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 9,
            "error": {"code": -32600, "message": "Invalid request: method must be a string"},
        },
    ]
    only_notes = [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    assert httpx.post(base, json=only_notes, headers=headers).status_code == 202
    empty = httpx.post(base, json=[], headers=headers)
    assert empty.status_code == 400 and empty.json()["error"]["code"] == -32600


def test_http_a_batch_in_a_revision_without_batches_is_refused_whole(base: str) -> None:
    headers = _open_at(base, "2025-06-18")
    batch = [{"jsonrpc": "2.0", "id": 7, "method": "ping"}]
    response = httpx.post(base, json=batch, headers=headers)
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "error": {
            "code": -32600,
            "message": "Invalid Request: protocol version 2025-06-18 has no batches",
        },
    }


def test_http_without_a_session_a_legacy_request_is_asked_to_initialize(base: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    response = httpx.post(base, json=ping, headers={"Accept": BOTH})
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "error": {
            "code": -32600,
            "message": "Bad Request: no Mcp-Session-Id; send initialize to start a session",
        },
    }


def test_http_modern_requests_ignore_a_session_header(base: str) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    discover = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}}
    headers = {
        "Accept": BOTH,
        "Mcp-Session-Id": "not-a-session",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "server/discover",
    }
    response = httpx.post(base, json=discover, headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["resultType"] == "complete"
    assert "mcp-session-id" not in response.headers


def test_http_a_flow_streams_its_request_and_takes_the_answer_by_post(base: str) -> None:
    session = _open(base)
    headers = _session_headers(session)
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "greet"}}

    async def flow() -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        async with (
            httpx.AsyncClient(timeout=10) as client,
            client.stream("POST", base, json=call, headers=headers) as response,
        ):
            assert response.headers["content-type"] == "text/event-stream"
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                message = json.loads(line[6:])
                seen.append(message)
                if message.get("method") == "elicitation/create":
                    answer = {"action": "accept", "content": {"name": "Ada"}}
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
                    posted = await client.post(base, json=reply, headers=headers)
                    assert posted.status_code == 202
        return seen

    seen = asyncio.run(flow())
    assert [m.get("method") for m in seen] == ["elicitation/create", None]
    assert seen[-1] == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"content": [{"type": "text", "text": "Hello, Ada (round 2)"}]},
    }
    assert httpx.delete(base, headers=headers).status_code == 200


def test_http_modern_only_refuses_initialize_with_its_versions() -> None:
    with serving(lambda port: snodo_run(MODERN_ONLY, "http", "--port", str(port))) as server:
        url = f"{server.base}/mcp"
        response = httpx.post(url, json=INIT, headers={"Accept": BOTH})
        assert response.status_code == 400
        assert response.json() == REFUSAL
        assert "mcp-session-id" not in response.headers
        # A sessionless legacy request: no version header, so 2025-03-26 is assumed.
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        response = httpx.post(url, json=listing, headers={"Accept": BOTH})
        assert response.status_code == 400
        assert response.json()["error"]["data"] == {
            "supported": ["2026-07-28"],
            "requested": "2025-03-26",
        }
        get = httpx.get(url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": "x"})
        assert get.status_code == 405


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _app(limits: LegacyLimits) -> tuple[HttpApp, Clock]:
    app = HttpApp(Server("bounded", "1.0.0", legacy=limits))
    clock = Clock()
    assert app.legacy is not None
    app.legacy.clock = clock
    return app, clock


def test_sessions_per_process_are_capped_and_idle_ones_expire() -> None:
    app, clock = _app(LegacyLimits(max_sessions=2, idle_timeout=60))

    async def run() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            opened = []
            for _ in range(2):
                response = await client.post("/mcp", json=INIT, headers={"Accept": BOTH})
                opened.append(response.headers["mcp-session-id"])
            full = await client.post("/mcp", json=INIT, headers={"Accept": BOTH})
            assert full.status_code == 503
            clock.now += 30
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            kept = await client.post("/mcp", json=ping, headers=_session_headers(opened[0]))
            assert kept.status_code == 200
            clock.now += 45  # the second session has been idle for 75 s, the first for 45 s
            again = await client.post("/mcp", json=INIT, headers={"Accept": BOTH})
            assert again.status_code == 200
            expired = await client.post("/mcp", json=ping, headers=_session_headers(opened[1]))
            assert expired.status_code == 404
            alive = await client.post("/mcp", json=ping, headers=_session_headers(opened[0]))
            assert alive.status_code == 200

    asyncio.run(run())


def test_a_session_answers_only_the_principal_that_opened_it() -> None:
    def authenticate(headers: Mapping[str, str]) -> str | None:
        return headers.get("authorization", "").removeprefix("Bearer ") or None

    app = HttpApp(Server("bound", "1.0.0"), authenticate=authenticate)

    async def run() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            alice = {"Accept": BOTH, "Authorization": "Bearer alice"}
            opened = await client.post("/mcp", json=INIT, headers=alice)
            session = opened.headers["mcp-session-id"]
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            as_alice = {**_session_headers(session), "Authorization": "Bearer alice"}
            as_bob = {**_session_headers(session), "Authorization": "Bearer bob"}
            assert (await client.post("/mcp", json=ping, headers=as_alice)).status_code == 200
            assert (await client.post("/mcp", json=ping, headers=as_bob)).status_code == 404
            assert (await client.delete("/mcp", headers=as_bob)).status_code == 404
            assert (await client.delete("/mcp", headers=as_alice)).status_code == 200

    asyncio.run(run())


def _at(app: HttpApp, address: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://localhost")


def test_one_client_address_cannot_take_every_session() -> None:
    app, clock = _app(LegacyLimits(max_sessions=8, max_sessions_per_principal=2))
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

    async def run() -> None:
        async with _at(app, "10.0.0.1") as greedy, _at(app, "10.0.0.2") as other:
            first, second = [
                (await greedy.post("/mcp", json=INIT, headers={"Accept": BOTH})).headers[
                    "mcp-session-id"
                ]
                for _ in range(2)
            ]
            clock.now += 10
            used = await greedy.post("/mcp", json=ping, headers=_session_headers(first))
            assert used.status_code == 200  # the second is now the longer idle
            for _ in range(20):  # far more than its share: each ends its longest idle
                again = await greedy.post("/mcp", json=INIT, headers={"Accept": BOTH})
                assert again.status_code == 200
                clock.now += 1
            assert (
                await greedy.post("/mcp", json=ping, headers=_session_headers(second))
            ).status_code == 404
            assert app.legacy is not None and len(app.legacy.sessions) == 2
            mine = await other.post("/mcp", json=INIT, headers={"Accept": BOTH})
            assert mine.status_code == 200
            assert len(app.legacy.sessions) == 3

    asyncio.run(run())


def _batch_app(limits: LegacyLimits) -> tuple[HttpApp, asyncio.Event, list[int]]:
    server = Server("batches", "1.0.0", legacy=limits)
    release = asyncio.Event()
    entered: list[int] = []

    @server.tool
    async def hold() -> str:
        entered.append(1)
        await release.wait()
        return "done"

    return HttpApp(server), release, entered


def test_a_batch_is_bounded_in_length_and_its_members_take_places() -> None:
    app, release, entered = _batch_app(LegacyLimits(max_batch=8, max_running=4))

    def call(request_id: int, name: str = "hold") -> dict[str, Any]:
        params = {"name": name, "arguments": {}}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    async def run() -> None:
        async with _at(app, "10.0.0.1") as client:
            hello = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}}
            opened = await client.post("/mcp", json=hello, headers={"Accept": BOTH})
            headers = {
                "Accept": BOTH,
                "Mcp-Session-Id": opened.headers["mcp-session-id"],
                "MCP-Protocol-Version": "2025-03-26",
            }
            too_long = await client.post("/mcp", json=[call(i) for i in range(9)], headers=headers)
            assert too_long.status_code == 400
            assert too_long.json()["error"] == {
                "code": -32600,
                "message": "Invalid Request: a batch of 9 messages; at most 8",
            }
            assert entered == []  # none of it ran
            held = asyncio.ensure_future(
                client.post("/mcp", json=[call(i) for i in range(4)], headers=headers)
            )
            while len(entered) < 4:  # all four members run: every place is taken
                await asyncio.sleep(0)
            ping = {"jsonrpc": "2.0", "id": 50, "method": "ping"}
            for refused in (
                await client.post("/mcp", json=[ping], headers=headers),
                await client.post("/mcp", json=ping, headers=headers),
            ):
                assert refused.status_code == 503
                assert "too many legacy requests" in refused.json()["error"]["message"]
            release.set()
            answered = await held
            assert [r["result"]["content"][0]["text"] for r in answered.json()] == ["done"] * 4
            pings = [{**ping, "id": i} for i in range(4)]  # the places are free again
            assert (await client.post("/mcp", json=pings, headers=headers)).status_code == 200

    asyncio.run(run())


def test_the_version_header_names_a_version_the_server_offers() -> None:
    """A session's MCP-Protocol-Version must be one this server offers: with
    ``versions=`` narrowing the legacy ones to 2025-11-25, an older version the catalog
    knows is refused (400), as is one nobody knows; unnarrowed, it is served."""
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

    async def statuses(server: Server) -> list[int]:
        transport = httpx.ASGITransport(app=HttpApp(server))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            opened = await client.post("/mcp", json=INIT, headers={"Accept": BOTH})
            headers = _session_headers(opened.headers["mcp-session-id"])
            out = []
            for version in ("2025-11-25", "2025-06-18", "1999-01-01"):
                sent = {**headers, "MCP-Protocol-Version": version}
                out.append((await client.post("/mcp", json=ping, headers=sent)).status_code)
            return out

    narrowed = Server("narrow", "1.0.0", versions=["2026-07-28", "2025-11-25"])
    assert narrowed.legacy_versions == ("2025-11-25",)
    assert asyncio.run(statuses(narrowed)) == [200, 400, 400]
    assert asyncio.run(statuses(Server("wide", "1.0.0"))) == [200, 200, 400]
