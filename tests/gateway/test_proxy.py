"""``snodo proxy`` (snodo.gateway) as real processes, in front of servers snodo did not
write and of its own example, driven by clients snodo did not write and by its own.

- A legacy-only stdio server (PyPI mcp 1.30's FastMCP, tests/client/legacy_server.py)
  served as a 2026-07-28 HTTP server: its questions, asked inside its session, reach a
  modern front client as MRTR rounds (the literal wire, the official Python SDK 2.3.0
  client, snodo's client for elicitation, sampling and roots), and a legacy front
  client through the bridge.
- snodo's example over HTTP behind the proxy: every flow of examples/preferences.py
  with snodo's client in both eras, PyPI mcp 1.30's client and the official TypeScript
  client (default legacy negotiation).
- The official SDK's 2026-07-28 server over stdio: its own MRTR round through the proxy.
- Errors keep their code and message; a forged state is refused before any backend call.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from snodo.client import Client, RequestError
from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.paths import ROOT
from tests.support.preferences_flows import every_flow
from tests.support.processes import Serving, accepting, free_port, serving, snodo_run, stop

LEGACY_SERVER = ["tests/client/legacy_server.py", "stdio"]
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}


def snodo_proxy(*backend: str) -> Any:
    return lambda port: [
        sys.executable,
        "-m",
        "snodo",
        "proxy",
        "--transport",
        "http",
        "--port",
        str(port),
        *backend,
    ]


@pytest.fixture(scope="module")
def legacy_backend() -> Iterator[Serving]:
    """The proxy in front of the legacy stdio server, which it starts itself."""
    command = snodo_proxy("--", str(legacy_sdk_python()), *LEGACY_SERVER)
    with serving(command) as proxy:
        yield proxy


def _post(url: str, method: str, params: dict[str, Any], request_id: int = 1) -> Any:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    headers = {**HEADERS, "mcp-method": method, "mcp-protocol-version": "2026-07-28"}
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    answer = httpx.post(url, json=body, headers=headers, timeout=30)
    assert answer.status_code in (200, 400), answer.text  # 400: a JSON-RPC error
    text = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        text = [d for d in data if '"id"' in d][-1]
    return json.loads(text)


def test_a_legacy_backends_question_is_an_mrtr_round_on_the_wire(legacy_backend: Serving) -> None:
    url = f"{legacy_backend.base}/mcp"
    call = {"name": "forecast", "arguments": {"days": 2}, "_meta": META}
    first = _post(url, "tools/call", call)["result"]
    assert first["resultType"] == "input_required", first
    [(key, asked)] = first["inputRequests"].items()
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["message"] == "Which city?"
    retry = {
        **call,
        "inputResponses": {key: {"action": "accept", "content": {"city": "Tromsø"}}},
        "requestState": first["requestState"],
    }
    second = _post(url, "tools/call", retry, 2)["result"]
    assert second["resultType"] == "complete"
    assert second["content"][0]["text"] == "Tromsø: sunny for 2 days"
    # The same state again: the backend call it named has ended.
    again = _post(url, "tools/call", retry, 3)
    assert again["error"]["code"] == -32602, again
    forged = {**retry, "requestState": first["requestState"][:-4] + "AAAA"}
    assert _post(url, "tools/call", forged, 4)["error"]["code"] == -32602


def test_the_official_python_sdk_in_modern_mode_through_the_proxy(
    legacy_backend: Serving,
) -> None:
    mcp_client = pytest.importorskip("mcp.client")
    types = pytest.importorskip("mcp_types")
    asked: list[str] = []

    async def user(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"city": "Bergen"})

    async def scenario(url: str) -> tuple[list[str], str]:
        async with mcp_client.Client(url, mode="2026-07-28", elicitation_callback=user) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("forecast", {"days": 3})
            return tools, result.content[0].text

    tools, text = asyncio.run(asyncio.wait_for(scenario(f"{legacy_backend.base}/mcp"), 60))
    assert "forecast" in tools and "summarize" in tools
    assert (text, asked) == ("Bergen: sunny for 3 days", ["Which city?"])


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_snodos_client_answers_every_kind_of_question(legacy_backend: Serving, era: str) -> None:
    """Elicitation (accepted, then declined), sampling and roots, each asked inside the
    backend's session, answered by a modern front's retries or a legacy front's
    session; progress from the backend reaches the front call."""
    answers = iter([{"action": "accept", "content": {"city": "Oslo"}}, {"action": "decline"}])
    progress: list[float] = []

    async def scenario(url: str) -> list[str]:
        async with Client.http(
            url,
            era=era,
            elicitation=lambda params: next(answers),
            sampling=lambda params: {
                "role": "assistant",
                "content": {"type": "text", "text": "short"},
                "model": "test-model",
            },
            roots=lambda params: {"roots": [{"uri": "file:///srv/notes"}]},
        ) as client:
            texts = []
            for name, arguments in [
                ("forecast", {"days": 1}),
                ("forecast", {"days": 1}),
                ("summarize", {"text": "long"}),
                ("count_roots", {}),
            ]:
                result = await client.call_tool(name, arguments)
                texts.append(result.content[0].text)  # type: ignore[union-attr]
            chatty = await client.call_tool(
                "chatty", {}, on_progress=lambda done, total, message: progress.append(done)
            )
            texts.append(chatty.content[0].text)  # type: ignore[union-attr]
            assert client.era == era
            return texts

    texts = asyncio.run(asyncio.wait_for(scenario(f"{legacy_backend.base}/mcp"), 60))
    assert texts == [
        "Oslo: sunny for 1 days",
        "no forecast (decline)",
        "model said: short",
        "file:///srv/notes",
        "done",
    ]
    assert progress == [1]


def test_errors_pass_through_with_their_code(legacy_backend: Serving) -> None:
    """The backend's own error (mcp 1.30 says code 0 for an unknown resource), and its
    tool error, are what the front client gets, as from the backend directly."""

    async def errors(client: Client) -> tuple[int, str, bool]:
        async with client:
            with pytest.raises(RequestError) as missing:
                await client.read_resource("static://nowhere")
            unknown = await client.call_tool("no_such_tool", {})
            return missing.value.code, missing.value.message, bool(unknown.is_error)

    direct = Client.stdio([str(legacy_sdk_python()), *LEGACY_SERVER])
    proxied = Client.http(f"{legacy_backend.base}/mcp", era="modern")
    expected = asyncio.run(asyncio.wait_for(errors(direct), 30))
    assert asyncio.run(asyncio.wait_for(errors(proxied), 30)) == expected
    assert expected[1] == "Unknown resource: static://nowhere" and expected[2]


@pytest.fixture(scope="module")
def preferences_backend() -> Iterator[Serving]:
    target = "examples/preferences.py:server"
    with (
        serving(lambda port: snodo_run(target, "http", "--port", str(port))) as backend,
        serving(snodo_proxy(f"{backend.base}/mcp")) as proxy,
    ):
        yield proxy


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_every_preferences_flow_through_the_proxy_with_snodos_client(
    preferences_backend: Serving, era: str
) -> None:
    texts = every_flow(f"{preferences_backend.base}/mcp", era)
    saved = "Would save: theme dark, language ja."
    assert texts == [
        saved,
        "You agreed to open the privacy notice; whether you read it is not known.",
        saved,
        f"User preferences: {saved}",
        "Hallo! [ja; notes]",
    ]


def test_every_preferences_flow_with_pypi_mcp_1_30(preferences_backend: Serving) -> None:
    from tests.legacy.test_legacy_sdk import CLIENT, _check

    run = subprocess.run(
        [str(legacy_sdk_python()), CLIENT, "http", f"{preferences_backend.base}/mcp"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    _check(json.loads(run.stdout.strip().splitlines()[-1]))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_every_preferences_flow_with_the_official_typescript_client(
    preferences_backend: Serving,
) -> None:
    client_dir = ROOT / "interop" / "official_client"
    if not (client_dir / "node_modules").is_dir():
        subprocess.run(["bash", str(ROOT / "scripts" / "interop"), "typed"], cwd=ROOT, check=False)
    env = {
        **os.environ,
        "SNODO_PYTHON": sys.executable,
        "SNODO_TRANSPORTS": "http",
        "SNODO_HTTP_URL": f"{preferences_backend.base}/mcp",
    }
    run = subprocess.run(
        ["node", str(client_dir / "check_mrtr.mjs")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0 and summary.endswith(" 0 failed"), run.stdout + run.stderr


def test_the_official_sdks_modern_server_through_the_proxy() -> None:
    backend = [sys.executable, "tests/client/official_modern_server.py", "stdio"]

    async def scenario(url: str) -> str:
        async with Client.http(
            url, elicitation=lambda params: {"action": "accept", "content": {"city": "Lima"}}
        ) as client:
            result = await client.call_tool("forecast", {"days": 4})
            return result.content[0].text  # type: ignore[union-attr]

    with serving(snodo_proxy("--", *backend)) as proxy:
        text = asyncio.run(asyncio.wait_for(scenario(f"{proxy.base}/mcp"), 60))
    assert text == "Lima: sunny for 4 days"


def test_a_retry_at_another_proxy_process_gets_a_clear_error() -> None:
    """Two proxy processes with one state secret, each with its own legacy backend: the
    state of a round opened at the first is valid at the second, which does not hold
    that backend call and says so."""
    backend = ("--", str(legacy_sdk_python()), *LEGACY_SERVER)
    env = {"SNODO_STATE_SECRET": "5e" * 32}
    with (
        serving(snodo_proxy(*backend), env=env) as first,
        serving(snodo_proxy(*backend), env=env) as second,
    ):
        call = {"name": "forecast", "arguments": {"days": 2}, "_meta": META}
        asked = _post(f"{first.base}/mcp", "tools/call", call)["result"]
        [key] = asked["inputRequests"]
        retry = {
            **call,
            "inputResponses": {key: {"action": "accept", "content": {"city": "Oslo"}}},
            "requestState": asked["requestState"],
        }
        elsewhere = _post(f"{second.base}/mcp", "tools/call", retry, 2)
        assert elsewhere["error"]["code"] == -32603
        assert "another proxy process" in elsewhere["error"]["message"]
        # The process that asked still takes the answer.
        done = _post(f"{first.base}/mcp", "tools/call", retry, 3)["result"]
        assert done["content"][0]["text"] == "Oslo: sunny for 2 days"


def test_a_retry_at_another_proxy_process_is_relayed_over_redis(redis_url: str) -> None:
    """The same two processes with ``--notify redis://...``: the second hands the
    answers to the first, which holds the backend call, and answers the front with
    what the call did next, here its result; then a whole second flow crosses over."""
    backend = ("--", str(legacy_sdk_python()), *LEGACY_SERVER)
    env = {"SNODO_STATE_SECRET": "5e" * 32}
    relayed = snodo_proxy("--notify", redis_url, *backend)
    with serving(relayed, env=env) as first, serving(relayed, env=env) as second:
        for days, city in ((2, "Oslo"), (4, "Lima")):
            call = {"name": "forecast", "arguments": {"days": days}, "_meta": META}
            asked = _post(f"{first.base}/mcp", "tools/call", call)["result"]
            [key] = asked["inputRequests"]
            retry = {
                **call,
                "inputResponses": {key: {"action": "accept", "content": {"city": city}}},
                "requestState": asked["requestState"],
            }
            done = _post(f"{second.base}/mcp", "tools/call", retry, 2)
            assert done["result"]["content"][0]["text"] == f"{city}: sunny for {days} days"
        # An answer for a call nobody holds any more: the holder says so, through the relay.
        again = _post(f"{second.base}/mcp", "tools/call", retry, 3)
        assert again["error"]["code"] == -32602, again


def test_a_question_the_front_cannot_answer_is_refused(
    legacy_backend: Serving,
) -> None:
    """The front declared no sampling: -32021 naming it, and the backend call is
    cancelled rather than left waiting for an answer that cannot come; the proxy goes on."""
    url = f"{legacy_backend.base}/mcp"
    call = {"name": "summarize", "arguments": {"text": "x"}, "_meta": META}
    refused = _post(url, "tools/call", call)
    assert refused["error"]["code"] == -32021, refused
    assert "sampling" in json.dumps(refused["error"])
    # The proxy still serves: the next call is answered.
    later = _post(
        url, "tools/call", {"name": "slow", "arguments": {"seconds": 0}, "_meta": META}, 2
    )
    assert later["result"]["content"][0]["text"] == "finally"


@pytest.mark.parametrize("backend_era", ["modern", "legacy"])
def test_a_backends_resource_update_reaches_the_proxys_listeners(backend_era: str) -> None:
    """A snodo server over stdio behind the proxy, spoken to in either era: a front
    client listening at the proxy hears the update of a resource it watches, raised in
    the backend by a call made through the proxy."""
    backend = snodo_run("tests/legacy/shared_server.py:server", "stdio")

    async def scenario(url: str) -> list[str]:
        heard: list[str] = []
        async with Client.http(url) as client, Client.http(url) as caller:

            async def listen() -> None:
                async for note in client.listen(resourceSubscriptions=["note://shared"]):
                    heard.append(str(note.get("method")))
                    if note.get("method") == "notifications/resources/updated":
                        assert note["params"]["uri"] == "note://shared"
                        return

            listening = asyncio.create_task(listen())
            await asyncio.sleep(0.3)
            await caller.call_tool("touch", {"uri": "note://shared"})
            await asyncio.wait_for(listening, 10)
        return heard

    command = snodo_proxy("--era", backend_era, "--", *backend)
    with serving(command) as proxy:
        heard = asyncio.run(asyncio.wait_for(scenario(f"{proxy.base}/mcp"), 30))
    assert heard[-1] == "notifications/resources/updated"


def test_a_legacy_backends_resource_that_asks_is_an_mrtr_round(legacy_backend: Serving) -> None:
    """resources/read of the legacy server's note, which elicits consent inside its
    session: a modern front answers it by retrying, as for a tool."""
    asked: list[str] = []

    def consent(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirmed": True}}

    async def scenario(url: str) -> str:
        async with Client.http(url, era="modern", elicitation=consent) as client:
            read = await client.read_resource("note://door")
            return read.contents[0].text  # type: ignore[union-attr]

    text = asyncio.run(asyncio.wait_for(scenario(f"{legacy_backend.base}/mcp"), 30))
    assert (text, asked) == ("note door: the key is under the mat", ["Show note door?"])


async def _sse_call(
    client: httpx.AsyncClient, url: str, params: dict[str, Any], heard: list[dict[str, Any]]
) -> Any:
    """A tools/call whose stream's notifications are put in ``heard`` as they come;
    returns the response."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {
        **HEADERS,
        "mcp-method": "tools/call",
        "mcp-name": params["name"],
        "mcp-protocol-version": "2026-07-28",
    }
    async with client.stream("POST", url, json=body, headers=headers) as answer:
        assert answer.status_code == 200
        if answer.headers["content-type"].startswith("application/json"):
            return json.loads(await answer.aread())
        async for line in answer.aiter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if "id" in message:
                return message
            heard.append(message)
    raise AssertionError("the stream ended without a response")


async def _until(heard: list[dict[str, Any]], method: str, text: str) -> None:
    """Wait (bounded by the caller) until ``heard`` has ``method`` carrying ``text``."""
    while not any(
        note["method"] == method and text in json.dumps(note["params"]) for note in heard
    ):
        await asyncio.sleep(0.01)


def test_each_front_request_hears_only_its_own_progress_and_log_messages() -> None:
    """Two front clients calling through the proxy into one stdio backend at once, with
    the same progress token: each hears its own call's progress (under its own token)
    and only its own call's log messages. A log message the stdio backend sends while
    both calls may have caused it is dropped rather than given to either."""
    backend = snodo_run("tests/gateway/noisy_server.py:server", "stdio")
    meta = {**META, "progressToken": "same", "io.modelcontextprotocol/logLevel": "debug"}

    def hold(tag: str) -> dict[str, Any]:
        return {"name": "hold", "arguments": {"tag": tag}, "_meta": meta}

    async def scenario(url: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        first: list[dict[str, Any]] = []
        second: list[dict[str, Any]] = []
        async with httpx.AsyncClient(timeout=60) as a, httpx.AsyncClient(timeout=60) as b:
            call_a = asyncio.ensure_future(_sse_call(a, url, hold("A"), first))
            await _until(first, "notifications/progress", '"A"')
            call_b = asyncio.ensure_future(_sse_call(b, url, hold("B"), second))
            await _until(second, "notifications/progress", '"B"')
            released = {"name": "release", "arguments": {"tag": "A"}, "_meta": META}
            assert (await _sse_call(a, url, released, []))["result"]["content"]
            assert (await call_a)["result"]["content"][0]["text"] == "A"
            released["arguments"] = {"tag": "B"}
            assert (await _sse_call(b, url, released, []))["result"]["content"]
            assert (await call_b)["result"]["content"][0]["text"] == "B"
        return first, second

    with serving(snodo_proxy("--", *backend)) as proxy:
        first, second = asyncio.run(asyncio.wait_for(scenario(f"{proxy.base}/mcp"), 60))
    for tag, heard in (("A", first), ("B", second)):
        progress = [note["params"] for note in heard if note["method"] == "notifications/progress"]
        logs = [
            note["params"]["data"] for note in heard if note["method"] == "notifications/message"
        ]
        assert progress and {p["message"] for p in progress} == {tag}, heard
        assert {p["progressToken"] for p in progress} == {"same"}
        assert logs and all(text.startswith(tag) for text in logs), heard
    # Alone in flight, a call's log messages reach it: A's start, B's end.
    assert "A start" in [
        n["params"]["data"] for n in first if n["method"] == "notifications/message"
    ]
    assert "B end" in [
        n["params"]["data"] for n in second if n["method"] == "notifications/message"
    ]


def test_one_front_client_cannot_hold_every_call_a_legacy_backend_keeps_open() -> None:
    """A legacy HTTP backend's questions, through the proxy: one front client (from
    127.0.0.2) opens calls and never answers them. It holds its share (16) and its next
    call is refused; another front client (127.0.0.1) still gets its question."""
    backend = [str(legacy_sdk_python()), *LEGACY_SERVER[:1]]
    call = {"name": "forecast", "arguments": {"days": 1}, "_meta": META}

    async def post(client: httpx.AsyncClient, url: str, request_id: int) -> Any:
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}
        headers = {
            **HEADERS,
            "mcp-method": "tools/call",
            "mcp-name": "forecast",
            "mcp-protocol-version": "2026-07-28",
        }
        answer = await client.post(url, json=body, headers=headers)
        text = answer.text
        if answer.headers["content-type"].startswith("text/event-stream"):
            data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
            text = [d for d in data if '"id"' in d][-1]
        return json.loads(text)

    async def scenario(url: str) -> tuple[list[Any], Any]:
        greedy = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with (
            httpx.AsyncClient(transport=greedy, timeout=60) as hog,
            httpx.AsyncClient(timeout=60) as other,
        ):
            held = [await post(hog, url, n) for n in range(17)]
            return held, await post(other, url, 100)

    port = free_port()
    with subprocess.Popen(
        [*backend, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ) as process:
        try:
            assert accepting(process, port)
            with serving(snodo_proxy(f"http://127.0.0.1:{port}/mcp")) as proxy:
                held, other = asyncio.run(asyncio.wait_for(scenario(f"{proxy.base}/mcp"), 120))
        finally:
            stop(process)
    assert other["result"]["resultType"] == "input_required", other
    kinds = [answer.get("result", {}).get("resultType") for answer in held]
    assert kinds == ["input_required"] * 16 + [None], held[-1]
    assert "16 calls waiting for its answers" in held[-1]["error"]["message"]
