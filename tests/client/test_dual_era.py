"""The default client against servers of either era, run as real processes.

Legacy: tests/client/legacy_server.py on the official SDK's legacy-only mcp 1.30.0,
over stdio and HTTP. Modern: tests/client/official_modern_server.py on mcp 2.3.0.
The client is built with default settings (era "auto") and the same handlers each
time; the legacy server's mid-call requests must reach exactly those handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.client import Client, ModernOnly, RequestError, TooManyRounds, UnsupportedServer
from snodo.client.era import VERDICTS
from snodo.client.transports import HttpTransport
from snodo_wire import CallToolResult, DiscoverResult, GetPromptResult, ReadResourceResult
from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.processes import accepting, free_port, snodo_run, stop

HERE = Path(__file__).resolve().parent
LEGACY = HERE / "legacy_server.py"
MODERN = HERE / "official_modern_server.py"
FUSSY = HERE / "fussy_server.py"


class Handlers:
    """The user's side: what each handler was asked, and fixed answers."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.notes: list[dict[str, Any]] = []

    def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("elicitation", params))
        if "city" in params["requestedSchema"]["properties"]:
            return {"action": "accept", "content": {"city": "Oslo"}}
        return {"action": "accept", "content": {"confirmed": True}}

    def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("sampling", params))
        return {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}

    def roots(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("roots", params))
        return {"roots": [{"uri": "file:///srv/data", "name": "data"}]}

    def options(self) -> dict[str, Any]:
        return {
            "elicitation": self.elicit,
            "sampling": self.sample,
            "roots": self.roots,
            "on_notification": self.notes.append,
        }


def serve_http(argv: list[str]) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [*argv, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert accepting(process, port), f"{argv} did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def legacy_url() -> Iterator[str]:
    yield from serve_http([str(legacy_sdk_python()), str(LEGACY)])


@pytest.fixture(scope="module")
def modern_url() -> Iterator[str]:
    yield from serve_http([sys.executable, str(MODERN)])


@pytest.fixture(params=["stdio", "http"])
def legacy_client(request: pytest.FixtureRequest) -> Iterator[tuple[Client, Handlers]]:
    handlers = Handlers()
    if request.param == "stdio":
        argv = [str(legacy_sdk_python()), str(LEGACY), "stdio"]
        yield Client.stdio(argv, **handlers.options()), handlers
    else:
        VERDICTS.clear()  # the probe itself is under test here
        yield Client.http(request.getfixturevalue("legacy_url"), **handlers.options()), handlers


def text(result: CallToolResult) -> str:
    dumped = result.model_dump(mode="json", by_alias=True)
    return " ".join(str(c.get("text")) for c in dumped["content"])


# -- a legacy-only server ------------------------------------------------------------------


def test_every_flow_completes_against_a_legacy_server(
    legacy_client: tuple[Client, Handlers],
) -> None:
    client, handlers = legacy_client

    async def main() -> None:
        async with client:
            tools = await client.list_tools()
            assert client.era == "legacy"
            assert [t.name for t in tools] == [
                "forecast",
                "summarize",
                "count_roots",
                "chatty",
                "slow",
                "connect_account",
                "touch",
            ]

            forecast = await client.call_tool("forecast", {"days": 2})
            assert isinstance(forecast, CallToolResult)
            assert forecast.result_type == "complete"
            assert text(forecast) == "Oslo: sunny for 2 days"
            assert text(await client.call_tool("summarize", {"text": "hi"})) == "model said: 42"
            assert text(await client.call_tool("count_roots", {})) == "file:///srv/data"
            chatty = await client.call_tool("chatty", {}, meta={"progressToken": "p-1"})
            assert text(chatty) == "done"  # after the server's ping was answered

            note = await client.read_resource("note://door")
            assert isinstance(note, ReadResourceResult)
            assert note.ttl_ms == 0 and note.cache_scope == "private"
            dumped = note.model_dump(mode="json", by_alias=True)
            assert dumped["contents"][0]["text"] == "note door: the key is under the mat"

            prompt = await client.get_prompt("greet", {"name": "Ann"})
            assert isinstance(prompt, GetPromptResult)
            assert prompt.model_dump(mode="json", by_alias=True)["messages"] == [
                {"role": "user", "content": {"type": "text", "text": "Say hello to Ann."}}
            ]
            assert [r.uri for r in await client.list_resources()] == ["static://hello"]
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates] == ["note://{name}"]
            assert [p.name for p in await client.list_prompts()] == ["greet"]
            completed = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "al")
            assert completed.completion.values == ["alice", "alfred"]

            discovered = await client.discover()
            assert isinstance(discovered, DiscoverResult)
            assert discovered.supported_versions == ["2025-11-25"]
            assert discovered.instructions == "A server of the initialize era."
            await client.ping()

    asyncio.run(main())
    kinds = [kind for kind, _ in handlers.asked]
    assert kinds == ["elicitation", "sampling", "roots", "elicitation"]
    forecast_question = handlers.asked[0][1]
    assert forecast_question["message"] == "Which city?"
    assert handlers.notes == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "working on it"},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p-1", "progress": 1.0, "total": 2.0},
        },
    ]


def test_manual_flows_are_refused_on_a_legacy_server(
    legacy_client: tuple[Client, Handlers],
) -> None:
    client, handlers = legacy_client

    async def main() -> None:
        async with client:
            with pytest.raises(ModernOnly, match="manual=True"):
                await client.call_tool("forecast", {"days": 1}, manual=True)
            with pytest.raises(RequestError) as unknown:
                await client.get_prompt("nope")
            assert "Unknown prompt: nope" in unknown.value.message  # (mcp 1.30 sends code 0)

    asyncio.run(main())
    assert handlers.asked == [], "nothing was sent for the refused manual call"


def test_listen_on_a_legacy_server_subscribes_and_delivers_in_the_modern_shape(
    legacy_client: tuple[Client, Handlers],
) -> None:
    client, _handlers = legacy_client
    uri = "note://watched"

    async def main() -> tuple[list[dict[str, Any]], str, str]:
        async with client:
            listening = client.listen(toolsListChanged=True, resourceSubscriptions=[uri])
            async with contextlib.aclosing(listening) as stream:
                ack = await asyncio.wait_for(anext(stream), 10)
                during = text(await client.call_tool("touch", {"uri": uri}))
                heard = [ack]
                for _ in range(2):
                    heard.append(await asyncio.wait_for(anext(stream), 10))
            after = text(await client.call_tool("touch", {"uri": "note://other"}))
            return heard, during, after

    heard, during, after = asyncio.run(main())
    listen_id = heard[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
    assert heard[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": listen_id},
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": [uri]},
        },
    }
    tagged = {"io.modelcontextprotocol/subscriptionId": listen_id}
    assert sorted(heard[1:], key=lambda note: note["method"]) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"_meta": tagged, "uri": uri},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": tagged},
        },
    ]
    assert uri in during.split(","), "resources/subscribe reached the server"
    assert uri not in after.split(","), "closing the stream unsubscribed"


def test_a_deadline_bounds_a_legacy_call_and_the_session_goes_on(
    legacy_client: tuple[Client, Handlers],
) -> None:
    client, _handlers = legacy_client

    async def main() -> str:
        async with client:
            # The session opened first (over stdio that starts the server, which on a
            # busy machine may take longer than the deadline): the deadline bounds the
            # call alone, and only the call that must exceed it.
            await client.list_tools()
            client.deadline = 0.5
            with pytest.raises(TooManyRounds, match=r"within 0\.5 s"):
                await client.call_tool("slow", {"seconds": 30})
            client.deadline = None
            return text(await client.call_tool("slow", {"seconds": 0}))

    assert asyncio.run(main()) == "finally"


def test_a_handler_that_fails_answers_the_server_with_an_error(legacy_url: str) -> None:
    def broken(_params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "maybe"}  # not an ElicitResult

    async def main() -> str:
        async with Client.http(legacy_url, elicitation=broken) as client:
            return text(await client.call_tool("forecast", {"days": 1}))

    # The SDK turns the client's JSON-RPC error into a failed tool call.
    assert "invalid result" in asyncio.run(main())


def test_the_http_verdict_is_cached_per_origin(legacy_url: str) -> None:
    VERDICTS.clear()
    methods: list[str] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            methods.append(json.loads(request.content).get("method", "(response)"))
        else:
            methods.append(request.method)

    async def session() -> None:
        http = httpx.AsyncClient(timeout=10, event_hooks={"request": [record]})
        async with Client(HttpTransport(legacy_url, client=http)) as client:
            await client.list_prompts()

    asyncio.run(session())
    first = list(methods)
    methods.clear()
    asyncio.run(session())
    # First contact: the modern request is refused, then the legacy session opens.
    assert first[:3] == ["prompts/list", "initialize", "notifications/initialized"]
    assert first[-2:] == ["prompts/list", "DELETE"]
    # The verdict is remembered: no modern request any more.
    assert methods[:3] == ["initialize", "notifications/initialized", "GET"]
    assert methods[-2:] == ["prompts/list", "DELETE"]


def test_era_modern_on_a_legacy_server_surfaces_its_refusal(legacy_url: str) -> None:
    async def main() -> None:
        async with Client.http(legacy_url, era="modern") as client:
            await client.list_tools()

    with pytest.raises(RequestError) as refused:
        asyncio.run(main())
    assert refused.value.code == -32600
    assert refused.value.message == "Bad Request: Missing session ID"


def test_era_modern_on_a_server_that_is_not_mcp_is_a_typed_error() -> None:
    def answer(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, text="<html>Not Found</html>")

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = Client(HttpTransport("http://127.0.0.1:9/mcp", client=http), era="modern")
    with pytest.raises(UnsupportedServer) as refused:
        asyncio.run(client.list_tools())
    assert "HTTP 404: <html>Not Found</html>" in str(refused.value)
    assert "era='auto' or 'legacy'" in str(refused.value)


def test_auto_on_a_server_of_neither_era_is_a_typed_error() -> None:
    def answer(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, text="Not Found")

    VERDICTS.clear()
    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = Client(HttpTransport("http://127.0.0.1:9/mcp", client=http))
    with pytest.raises(UnsupportedServer) as refused:
        asyncio.run(client.list_tools())
    assert "refused initialize (HTTP 404: Not Found)" in str(refused.value)
    assert "server supports: none named" in str(refused.value)


def test_a_modern_only_server_refusing_initialize_names_its_versions() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        error = {
            "code": -32601,
            "message": "initialize is not supported; use 2026-07-29",
            "data": {"supported": ["2026-07-29"]},
        }
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "error": error})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = Client(HttpTransport("http://127.0.0.1:9/mcp", client=http), era="legacy")
    with pytest.raises(UnsupportedServer) as refused:
        asyncio.run(client.list_tools())
    assert refused.value.supported == ["2026-07-29"]
    assert "server supports: 2026-07-29" in str(refused.value)


# -- stdio probing -------------------------------------------------------------------------


@pytest.mark.parametrize("manner", ["exit", "silent"])
def test_stdio_falls_back_when_the_probe_kills_or_stalls_the_server(
    manner: str, tmp_path: Path
) -> None:
    """``exit``: the server quits on a request before initialize, so the client starts
    it again for the session; ``silent``: it never answers, so the probe times out.

    The probe's time includes starting the server process, which on a busy machine may
    take longer than any small bound: ``exit`` must not time out before the server read
    the probe (the process ending ends the probe, whatever its bound), and ``silent``
    answers the same whenever its probe times out."""
    argv = [sys.executable, str(FUSSY), manner, str(tmp_path / "starts")]
    probe_timeout = 0.5 if manner == "silent" else 120.0

    async def main() -> tuple[list[str], str]:
        async with Client.stdio(argv, probe_timeout=probe_timeout) as client:
            names = [t.name for t in await client.list_tools()]
            assert client.era == "legacy" and client.legacy is not None
            return names, client.legacy.server["serverInfo"]["name"]

    names, answered_by = asyncio.run(main())
    assert names == ["echo"]
    # Which start answered initialize: a second process after "exit", the first after
    # a stall (the probe's timeout does not cost the process).
    assert answered_by == ("fussy 2" if manner == "exit" else "fussy 1")


# -- a modern server -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_the_same_client_completes_mrtr_against_the_official_modern_server(
    kind: str, request: pytest.FixtureRequest
) -> None:
    handlers = Handlers()
    if kind == "http":
        client = Client.http(request.getfixturevalue("modern_url"), **handlers.options())
    else:
        client = Client.stdio([sys.executable, str(MODERN), "stdio"], **handlers.options())

    async def main() -> str:
        async with client:
            result = await client.call_tool("forecast", {"days": 3})
            assert client.era == "modern" and client.legacy is None
            return text(result)

    assert asyncio.run(main()) == "Oslo: sunny for 3 days"
    assert [kind for kind, _ in handlers.asked] == ["elicitation"]


def test_a_modern_server_too_slow_for_the_probe_is_still_found_modern(tmp_path: Path) -> None:
    """The probe times out, so the client tries initialize; the server refuses it
    naming 2026-07-28, and the client goes modern instead of failing."""
    argv = [sys.executable, str(FUSSY), "late", str(tmp_path / "starts")]

    async def main() -> None:
        async with Client.stdio(argv, probe_timeout=0.2) as client:
            assert await client.list_tools() == []
            assert client.era == "modern" and client.legacy is None

    asyncio.run(main())


def _restartable(argv: list[str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert accepting(process, port), f"{argv} did not start"
    return process


@pytest.mark.parametrize("server", ["mcp 1.30", "snodo"])
def test_a_legacy_server_restarted_mid_session_gets_a_new_session(server: str) -> None:
    """The legacy basic/transports.mdx: a 404 for the session means start a new one
    with initialize; the request that got it was not processed, so it is sent again."""
    port = free_port()
    if server == "snodo":
        argv = snodo_run("tests/legacy/servers.py:server", "http", "--port", str(port))
    else:
        argv = [str(legacy_sdk_python()), str(LEGACY), "http", str(port)]
    process = _restartable(argv, port)
    renewals: list[int] = []

    async def main() -> list[str]:
        nonlocal process
        client = Client.http(f"http://127.0.0.1:{port}/mcp", era="legacy")
        async with client:
            before = [tool.name for tool in await client.list_tools()]
            stop(process)
            process = _restartable(argv, port)  # the session the client holds is gone
            after = [tool.name for tool in await client.list_tools()]
            assert client.legacy is not None
            renewals.append(client.legacy.renewals)
            assert after == before
            return after

    try:
        assert asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        stop(process)
    assert renewals == [1]


def test_a_calls_progress_and_logs_reach_its_callbacks_on_a_legacy_server(
    legacy_client: tuple[Client, Handlers],
) -> None:
    """mcp 1.30's chatty tool logs and reports progress against the call's token."""
    client, handlers = legacy_client
    steps: list[tuple[float, float | None, str | None]] = []
    logs: list[Any] = []

    async def main() -> None:
        async with client:
            done = await client.call_tool(
                "chatty",
                {},
                on_progress=lambda progress, total, message: steps.append(
                    (progress, total, message)
                ),
                on_log=logs.append,
            )
            assert text(done) == "done"

    asyncio.run(main())
    assert steps == [(1.0, 2.0, None)]
    assert logs == [{"level": "info", "data": "working on it"}]
    assert handlers.notes == []  # nothing of the call's reached the client-wide callback


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_handler_is_cancelled_when_the_legacy_server_gives_up_its_question(
    transport: str,
) -> None:
    """The call is abandoned while the user is being asked; the server's bridge then
    cancels its elicitation request (notifications/cancelled), and the client stops the
    handler still asking, sending no answer."""
    target = "tests/legacy/servers.py:server"
    asking = asyncio.Event()
    outcome: list[str] = []

    async def user(params: dict[str, Any]) -> dict[str, Any]:
        asking.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        return {"action": "accept", "content": {"name": "Ada"}}

    async def main(client: Client) -> None:
        async with client:
            call = asyncio.ensure_future(client.call_tool("greet"))
            await asyncio.wait_for(asyncio.shield(asking.wait()), 20)
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            for _ in range(100):
                if outcome:
                    break
                await asyncio.sleep(0.05)
            before_close.extend(outcome)  # not the close's own cancelling

    before_close: list[str] = []
    if transport == "stdio":
        asyncio.run(main(Client.stdio(snodo_run(target, "stdio"), era="legacy", elicitation=user)))
    else:
        port = free_port()
        process = _restartable(snodo_run(target, "http", "--port", str(port)), port)
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            asyncio.run(main(Client.http(url, era="legacy", elicitation=user)))
        finally:
            stop(process)
    assert before_close == ["cancelled"]
