"""Hostile and broken servers cannot wedge or flood the client (issue 19).

Each server here misbehaves in one way. Every test bounds itself with a generous
``asyncio.wait_for`` (failing instead of hanging) and asserts the outcome: the snodo
error type, handlers not called, memory within a generous bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import tracemalloc
from collections.abc import AsyncGenerator, Awaitable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

import snodo.client.rounds
from snodo.client import (
    Client,
    ClientError,
    ClientLimits,
    DeadlineExceeded,
    LimitExceeded,
    ProtocolViolation,
    RequestError,
    RequestTimeout,
    TransportError,
)
from snodo.client.transports import HttpTransport
from snodo.client.transports.base import HttpRefused
from tests.client.hostile import Scripted, head, hostile_http, stdio_script

T = TypeVar("T")
BOUND = 60.0
"""Seconds after which a test fails rather than hangs; never a measure of speed."""
MIB = 1024 * 1024


def run(main: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main, BOUND)

    return asyncio.run(bounded())


def http_client(url: str, limits: ClientLimits, **options: Any) -> Client:
    return Client(HttpTransport(url, limits=limits), era="modern", limits=limits, **options)


def ok(message: dict[str, Any], result: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result or {}}).encode()


# -- stdio -------------------------------------------------------------------------------


def test_an_over_long_or_deep_line_fails_only_its_request(tmp_path: Path) -> None:
    argv = stdio_script(
        tmp_path,
        "for r in requests():\n"
        "    if r['method'] == 'tools/list':\n"
        "        padded = {'tools': [], 'x': 'y' * 5000}\n"
        "        send({'jsonrpc': '2.0', 'id': r['id'], 'result': padded})\n"
        "    else:\n"
        "        raw(b'[' * 100000 + b'\\n')\n"
        "        raw(b'{\"a\":' * 50000 + b'\\n')\n"
        "        send({'jsonrpc': '2.0', 'id': r['id'], 'result': {}})\n",
    )
    limits = ClientLimits(max_message_bytes=4096, request_timeout=2)

    async def main() -> None:
        client = Client.stdio(argv, era="modern", limits=limits)
        async with client:
            with pytest.raises(RequestTimeout):
                await client.list_tools()
            await client.ping()  # the reader survived both lines
            await client.ping()

    run(main())


def test_a_line_far_beyond_the_limit_costs_no_more_than_the_limit(tmp_path: Path) -> None:
    argv = stdio_script(
        tmp_path,
        "for r in requests():\n"
        "    raw(b'x' * (60 * 1024 * 1024) + b'\\n')\n"
        "    send({'jsonrpc': '2.0', 'id': r['id'], 'result': {}})\n",
    )
    limits = ClientLimits(max_message_bytes=MIB)

    async def main() -> None:
        async with Client.stdio(argv, era="modern", limits=limits) as client:
            await client.ping()

    tracemalloc.start()
    try:
        run(main())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MIB, f"peak {peak / MIB:.1f} MiB for a 60 MiB line"


def test_a_silent_server_times_out_and_close_kills_one_that_will_not_exit(
    tmp_path: Path,
) -> None:
    argv = stdio_script(
        tmp_path,
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "for r in requests():\n"
        "    pass\n"
        "while True:\n"
        "    time.sleep(1)\n",
    )
    limits = ClientLimits(request_timeout=1, close_grace=0.5)

    async def main() -> None:
        client = Client.stdio(argv, era="modern", limits=limits, deadline=30)
        with pytest.raises(RequestTimeout):
            await client.list_tools()
        await client.close()
        process = client.transport.process  # type: ignore[attr-defined]
        assert process is None

    run(main())


def test_close_asks_a_server_that_outlives_its_input_to_stop_with_sigterm(
    tmp_path: Path,
) -> None:
    """basic/lifecycle.mdx, stdio: close stdin, wait, SIGTERM, wait, SIGKILL. This one
    stays after end of input but stops on SIGTERM, and says so."""
    marker = tmp_path / "terminated"
    argv = stdio_script(
        tmp_path,
        "def stop(signum, frame):\n"
        f"    open({str(marker)!r}, 'w').write('SIGTERM')\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "for r in requests():\n"
        "    send({'jsonrpc': '2.0', 'id': r['id'], 'result': {}})\n"
        "while True:\n"
        "    time.sleep(0.1)\n",
    )

    async def main() -> None:
        client = Client.stdio(argv, era="legacy", limits=ClientLimits(close_grace=0.5))
        with contextlib.suppress(ClientError):
            await client.list_tools()  # whatever it answers, the process is up
        process = client.transport.process  # type: ignore[attr-defined]
        await client.close()
        assert process is not None and process.returncode == 0

    run(main())
    assert marker.read_text() == "SIGTERM"


def test_ping_asks_a_modern_server_for_discovery_and_a_legacy_one_for_ping() -> None:
    transport = Scripted(
        {
            "result": {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {},
            }
        }
    )

    async def main() -> None:
        client = Client(transport, era="modern")
        await client.ping()

    run(main())
    assert [m["method"] for m in transport.sent] == ["server/discover"]


def test_the_deadline_covers_the_era_probe_and_the_initialize_after_it(
    tmp_path: Path,
) -> None:
    """A silent stdio server, era "auto": the server/discover probe (5 s by default) and
    the initialize that would follow both count against a 2 s deadline."""
    argv = stdio_script(tmp_path, "for r in requests():\n    pass\n")
    elapsed: list[float] = []

    async def main() -> None:
        client = Client.stdio(argv, deadline=2)
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            await client.list_tools()
        elapsed.append(time.monotonic() - started)
        await client.close()

    run(main())
    assert 1.5 < elapsed[0] < 4.5  # not the probe's 5 s and initialize's 2 s after it


def test_endless_notifications_fail_the_request(tmp_path: Path) -> None:
    argv = stdio_script(
        tmp_path,
        "for r in requests():\n"
        "    while True:\n"
        "        send({'jsonrpc': '2.0', 'method': 'notifications/message',\n"
        "              'params': {'level': 'info', 'data': 'spam'}})\n",
    )
    heard: list[dict[str, Any]] = []
    limits = ClientLimits(max_notifications=100)

    async def main() -> None:
        client = Client.stdio(argv, era="modern", limits=limits, on_notification=heard.append)
        async with client:
            with pytest.raises(LimitExceeded):
                await client.ping()

    run(main())
    assert len(heard) == 100


def test_a_deadline_bounds_a_stdio_request(tmp_path: Path) -> None:
    argv = stdio_script(tmp_path, "for r in requests():\n    pass\n")

    async def main() -> None:
        async with Client.stdio(argv, era="modern", deadline=0.5) as client:
            with pytest.raises(DeadlineExceeded, match=r"within 0\.5 s"):
                await client.call_tool("anything")

    run(main())


# -- HTTP --------------------------------------------------------------------------------


def test_a_silent_http_server_is_a_timeout_not_httpx() -> None:
    async def respond(message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(BOUND)

    async def main() -> None:
        async with hostile_http(respond) as url:
            client = http_client(url, ClientLimits(request_timeout=1))
            async with client:
                with pytest.raises(RequestTimeout):
                    await client.list_tools()
            client = http_client(url, ClientLimits(), deadline=0.5)
            async with client:
                with pytest.raises(DeadlineExceeded):
                    await client.call_tool("t")

    run(main())


@pytest.mark.parametrize("kind", ["keep-alive", "notifications"])
def test_an_endless_sse_stream_is_bounded(kind: str) -> None:
    async def respond(message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        writer.write(head(kind="text/event-stream"))
        note = b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n'
        for _ in range(100_000):
            writer.write(b": keep-alive\n\n" if kind == "keep-alive" else note)
            await writer.drain()
            await asyncio.sleep(0.01)

    limits = ClientLimits(request_timeout=1.5, max_notifications=20)

    async def main() -> None:
        async with hostile_http(respond) as url, http_client(url, limits) as client:
            with pytest.raises(RequestTimeout if kind == "keep-alive" else LimitExceeded):
                await client.ping()

    run(main())


@pytest.mark.parametrize("form", ["json", "sse-line", "sse-event"])
def test_a_huge_body_is_refused_within_bounded_memory(form: str) -> None:
    chunk = b"x" * MIB

    async def respond(message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        if form == "json":
            writer.write(head() + b'{"jsonrpc":"2.0","id":1,"result":{"x":"')
        elif form == "sse-line":
            writer.write(head(kind="text/event-stream") + b"data: ")
        else:
            writer.write(head(kind="text/event-stream"))
        for _ in range(100):
            writer.write(chunk if form != "sse-event" else b"data: " + chunk + b"\n")
            await writer.drain()

    limits = ClientLimits(max_message_bytes=2 * MIB, max_sse_line_bytes=2 * MIB)

    async def main() -> None:
        async with hostile_http(respond) as url, http_client(url, limits) as client:
            with pytest.raises(LimitExceeded):
                await client.ping()

    tracemalloc.start()
    try:
        run(main())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * MIB, f"peak {peak / MIB:.1f} MiB for a 100 MiB body"


def test_multi_line_sse_data_is_one_message_and_a_bare_json_line_is_none() -> None:
    async def respond(message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        wrong = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"bare": 1}})
        writer.write(head(kind="text/event-stream"))
        writer.write(wrong.encode() + b"\n\n")
        writer.write(b'event: message\nid: 7\ndata: {"jsonrpc": "2.0",\n')
        writer.write(b'data: "id": ' + str(message["id"]).encode() + b', "result": {}}\n\n')

    async def main() -> dict[str, Any]:
        async with hostile_http(respond) as url, http_client(url, ClientLimits()) as client:
            return await client.request("ping")

    assert run(main()) == {}


def test_a_deep_notification_before_the_answer_does_not_lose_it() -> None:
    async def respond(message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        writer.write(head(kind="text/event-stream"))
        writer.write(b'data: {"jsonrpc":"2.0","method":"x","params":' + b"[" * 50_000 + b"\n\n")
        writer.write(b"data: " + ok(message, {"fine": True}) + b"\n\n")

    async def main() -> dict[str, Any]:
        async with hostile_http(respond) as url, http_client(url, ClientLimits()) as client:
            return await client.request("ping")

    assert run(main()) == {"fine": True}


def test_a_500_carrying_a_result_is_an_error() -> None:
    async def respond(message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        writer.write(head(500) + ok(message, {"tools": []}))

    async def main() -> None:
        async with hostile_http(respond) as url, http_client(url, ClientLimits()) as client:
            with pytest.raises(HttpRefused) as refused:
                await client.list_tools()
            assert refused.value.status == 500

    run(main())


def test_a_deep_json_body_is_a_client_error() -> None:
    async def respond(message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        writer.write(head() + b"[" * 100_000 + b"]" * 100_000)

    async def main() -> None:
        async with hostile_http(respond) as url, http_client(url, ClientLimits()) as client:
            with pytest.raises(TransportError):
                await client.list_tools()

    run(main())


def test_a_connection_reset_is_a_transport_error() -> None:
    async def respond(message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        writer.transport.abort()

    async def main() -> None:
        async with hostile_http(respond) as url, http_client(url, ClientLimits()) as client:
            with pytest.raises(TransportError):
                await client.ping()

    run(main())


# -- malformed answers -------------------------------------------------------------------

MALFORMED: dict[str, tuple[str, dict[str, Any], type[ClientError]]] = {
    "error is a string": ("ping", {"error": "boom"}, ProtocolViolation),
    "error is empty": ("ping", {"error": {}}, RequestError),
    "result without content": ("call", {"result": {"resultType": "complete"}}, ProtocolViolation),
    "inputRequests a list": (
        "call",
        {"result": {"resultType": "input_required", "inputRequests": [1]}},
        ProtocolViolation,
    ),
    "tools a string": ("list", {"result": {"tools": "many"}}, ProtocolViolation),
    "a tool without a name": (
        "list",
        {"result": {"tools": [{"inputSchema": {"type": "object"}}]}},
        ProtocolViolation,
    ),
    "unknown resultType": ("call", {"result": {"resultType": "x" * 10_000}}, ProtocolViolation),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_is_a_typed_error(case: str) -> None:
    call, response, error = MALFORMED[case]

    async def main() -> None:
        client = Client(Scripted(response))
        with pytest.raises(error):
            if call == "ping":
                await client.ping()
            elif call == "call":
                await client.call_tool("t")
            else:
                await client.list_tools()

    run(main())


# -- listings ----------------------------------------------------------------------------


class Pages:
    """A listing that never ends: a fresh cursor each page, or the same one."""

    def __init__(self, repeat: bool) -> None:
        self.repeat = repeat
        self.sent = 0

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: Any
    ) -> dict[str, Any]:
        self.sent += 1
        cursor = "same" if self.repeat else f"page-{self.sent}"
        page = {"tools": [{"name": f"t{self.sent}", "inputSchema": {"type": "object"}}]}
        return {"jsonrpc": "2.0", "id": message["id"], "result": {**page, "nextCursor": cursor}}

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        yield {}

    async def close(self) -> None:
        return None


@pytest.mark.parametrize(
    ("repeat", "limits", "error", "sent"),
    [
        (True, ClientLimits(), ProtocolViolation, 2),
        (False, ClientLimits(max_pages=7), LimitExceeded, 7),
        (False, ClientLimits(max_items=3), LimitExceeded, 4),
    ],
)
def test_listings_are_bounded(
    repeat: bool, limits: ClientLimits, error: type[ClientError], sent: int
) -> None:
    transport = Pages(repeat)

    async def main() -> None:
        with pytest.raises(error):
            await Client(transport, limits=limits).list_tools()

    run(main())
    assert transport.sent == sent


# -- input requests ----------------------------------------------------------------------


class Asked:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def form(self, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(params)
        return {"action": "decline"}

    def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}


FORM = {
    "method": "elicitation/create",
    "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
}
SAMPLE = {
    "method": "sampling/createMessage",
    "params": {"messages": [], "maxTokens": 5, "tools": [], "toolChoice": {"mode": "auto"}},
}

ROUNDS: dict[str, tuple[dict[str, Any], type[ClientError]]] = {
    "sampling tools without sampling.tools": ({"s": SAMPLE}, ProtocolViolation),
    "sampling context without sampling.context": (
        {
            "s": {
                **SAMPLE,
                "params": {"messages": [], "maxTokens": 5, "includeContext": "allServers"},
            }
        },
        ProtocolViolation,
    ),
    "a form before an undeclared request": (
        {"a": FORM, "b": {"method": "roots/list", "params": {}}},
        ProtocolViolation,
    ),
    "ten thousand forms": ({str(i): FORM for i in range(10_000)}, LimitExceeded),
    **{
        f"a {scheme} URL": (
            {
                "u": {
                    "method": "elicitation/create",
                    "params": {"mode": "url", "message": "go", "elicitationId": "e", "url": url},
                }
            },
            ProtocolViolation,
        )
        for scheme, url in [
            ("javascript", "javascript:alert(1)"),
            ("file", "file:///etc/passwd"),
            ("data", "data:text/html,hi"),
        ]
    },
}


@pytest.mark.parametrize("resumed", [False, True], ids=["run", "resume"])
@pytest.mark.parametrize("case", sorted(ROUNDS))
def test_a_round_is_checked_before_any_handler_runs(case: str, resumed: bool) -> None:
    """Alike whether the client runs the flow or resumes a paused one."""
    requests, error = ROUNDS[case]
    asked = Asked()
    transport = Scripted(
        {"result": {"resultType": "input_required", "inputRequests": requests}},
    )

    async def main() -> None:
        client = Client(
            transport,
            elicitation=asked.form,
            url_elicitation=asked.form,
            sampling=asked.sample,
        )
        with pytest.raises(error):
            if resumed:
                await client.resume(await client.call_tool("t", manual=True))
            else:
                await client.call_tool("t")

    run(main())
    assert asked.calls == []
    assert len(transport.sent) == 1, "nothing answered"


def test_no_pause_after_the_last_state_only_round(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(snodo.client.rounds.asyncio, "sleep", sleep)
    transport = Scripted({"result": {"resultType": "input_required", "requestState": "s"}})

    async def main() -> None:
        with pytest.raises(ClientError, match="after 3 rounds"):
            await Client(transport, max_rounds=3).call_tool("t")

    run(main())
    assert len(transport.sent) == 3
    assert len(pauses) == 2, "a pause between rounds, none after the last"


def test_a_server_sent_cancellation_ends_a_listen_over_stdio(tmp_path: Path) -> None:
    """basic/patterns/cancellation.mdx: on stdio the server ends a listen stream with
    notifications/cancelled naming the listen request."""
    argv = stdio_script(
        tmp_path,
        "for r in requests():\n"
        "    if r['method'] == 'subscriptions/listen':\n"
        "        meta = {'io.modelcontextprotocol/subscriptionId': r['id']}\n"
        "        send({'jsonrpc': '2.0', 'method': 'notifications/subscriptions/acknowledged',\n"
        "              'params': {'_meta': meta, 'notifications': {'toolsListChanged': True}}})\n"
        "        send({'jsonrpc': '2.0', 'method': 'notifications/cancelled',\n"
        "              'params': {'requestId': r['id'], 'reason': 'shutting down'}})\n",
    )
    heard: list[str] = []

    async def main() -> None:
        async with Client.stdio(argv, era="modern") as client:
            async with asyncio.timeout(10):
                async for note in client.listen(toolsListChanged=True):
                    heard.append(note["method"])

    run(main())
    assert heard == ["notifications/subscriptions/acknowledged"]
