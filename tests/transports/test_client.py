"""snodo's Client against snodo's server over memory, a stdio subprocess and HTTP.

Every test runs once per transport. The stdio process is shared by the module (one
event loop, ``loop``), the HTTP process by the session. ``Recording`` sits between the
Client and its transport and keeps every message and header set that went out, and
every response that came back, so the tests can check the wire as well as the results.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import MISSING

import snodo
from snodo.client import Client, DeadlineExceeded, Flow, RequestError, TooManyRounds
from snodo.client.transports import (
    ClientTransport,
    HttpRefused,
    HttpTransport,
    MemoryTransport,
    OnNotification,
    StdioTransport,
)
from snodo.extensions.tasks import TasksClient
from snodo_wire import InputRequiredResult
from tests.support import transport_server
from tests.support.loop import Loop
from tests.support.wire import VERSION
from tests.transports import servers

TRANSPORTS = ["memory", "stdio", "http"]
SNODO = Path(snodo.__file__).parent
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
"""What a Client declares once the tasks extension's half is added (``TasksClient``)."""


class Recording:
    """A transport that passes everything on and remembers what crossed it."""

    def __init__(self, inner: ClientTransport, *, owned: bool = True) -> None:
        self.inner = inner
        self.owned = owned
        self.sent: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.received: list[dict[str, Any]] = []
        self.times: list[float] = []

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        self.sent.append(copy.deepcopy(message))
        self.headers.append(dict(headers))
        self.times.append(time.monotonic())
        try:
            response = await self.inner.request(message, headers, on_notification)
        except HttpRefused as refused:  # an HTTP 4xx: its body is what came back
            self.received.append(refused.body)
            raise
        self.received.append(response)
        return response

    def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        self.sent.append(copy.deepcopy(message))
        self.headers.append(dict(headers))
        return self.inner.stream(message, headers)

    async def close(self) -> None:
        if self.owned:
            await self.inner.close()

    def params(self, method: str | None = None) -> list[dict[str, Any]]:
        return [m["params"] for m in self.sent if method is None or m["method"] == method]


Connect = Callable[..., Recording]


@pytest.fixture(scope="module")
def shared_stdio(loop: Loop) -> StdioTransport:
    transport = StdioTransport(transport_server.command("stdio"))
    loop.cleanups.append(transport.close)
    return transport


@pytest.fixture(params=TRANSPORTS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def connect(kind: str, request: pytest.FixtureRequest, loop: Loop) -> Connect:
    """Makes a recording transport of this test's kind; ``fresh=True`` for a new process."""

    def make(fresh: bool = False) -> Recording:
        if kind == "memory":
            return Recording(MemoryTransport(servers.server))
        if kind == "http":
            url: str = request.getfixturevalue("http_url")
            if fresh:  # the convenience constructor's transport
                return Recording(Client.http(url).transport)
            return Recording(HttpTransport(url, timeout=10))
        if fresh:
            transport = StdioTransport(transport_server.command("stdio"))
            loop.cleanups.append(transport.close)
            return Recording(transport)
        return Recording(request.getfixturevalue("shared_stdio"), owned=False)

    return make


def generator(stream: AsyncIterator[dict[str, Any]]) -> AsyncGenerator[dict[str, Any], None]:
    """Client.listen is typed as an iterator; it is a generator, so it can be closed."""
    assert isinstance(stream, AsyncGenerator)
    return stream


def run(loop: Loop, coroutine: Any) -> Any:
    return loop.run(coroutine)


class User:
    """Answers the profile questions from a script, recording each round's questions."""

    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        field = next(iter(params["requestedSchema"]["properties"]))
        self.asked.append(field)
        answer = self.answers.get(field)
        if answer in ("decline", "cancel"):
            return {"action": answer}
        if answer is None:
            return {"action": "accept", "content": {}}  # skipped: still missing
        return {"action": "accept", "content": {field: answer}}


def text_of(result: Any) -> str:
    if hasattr(result, "content"):
        return str(result.content[0].text)
    if hasattr(result, "contents"):
        return str(result.contents[0].text)
    return str(result.messages[0].content.text)


async def start(client: Client, flow: str, *, manual: bool = False) -> Any:
    if flow == "tool":
        return await client.call_tool("profile", manual=manual)
    if flow == "resource":
        return await client.read_resource("profile://me", manual=manual)
    return await client.get_prompt("profile", manual=manual)


def expected(flow: str, text: str) -> str:
    return f"Profile: {text}" if flow == "prompt" else text


# --- plain requests ----------------------------------------------------------------------


def test_discover_and_a_plain_call(loop: Loop, connect: Connect, kind: str) -> None:
    transport = connect()

    async def main() -> None:
        async with Client(transport, name="tester", version="9.9") as client:
            discovered = await client.discover()
            assert discovered.supported_versions == [VERSION]
            assert discovered.capabilities.tools is not MISSING
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.content[0].text == "5"
            assert result.is_error is not True

    run(loop, main())
    for params in transport.params():
        meta = params["_meta"]
        assert meta[PROTOCOL_VERSION] == VERSION
        assert meta[CLIENT_INFO] == {"name": "tester", "version": "9.9"}
        assert meta[CAPABILITIES] == {}  # no handler, no extension: nothing declared
    ids = [m["id"] for m in transport.sent]
    assert len(set(ids)) == len(ids)
    call_headers = transport.headers[-1]
    assert call_headers["MCP-Protocol-Version"] == VERSION
    assert call_headers["Mcp-Method"] == "tools/call"
    assert call_headers["Mcp-Name"] == "add"


def test_errors_surface_as_request_errors(loop: Loop, connect: Connect) -> None:
    async def main() -> None:
        async with Client(connect()) as client:
            with pytest.raises(RequestError) as unknown:
                await client.call_tool("no_such_tool")
            assert unknown.value.code == -32602
            assert unknown.value.required_capabilities is None
            with pytest.raises(RequestError) as missing:
                await client.read_resource("data://nothing-here")
            assert missing.value.code == -32602
            assert missing.value.data == {"uri": "data://nothing-here"}
            failed = await client.call_tool("add", {"a": "two", "b": 3})
            assert failed.is_error is True

    run(loop, main())


def test_an_older_version_is_renegotiated_from_32022(loop: Loop, connect: Connect) -> None:
    transport = connect()

    async def main() -> None:
        async with Client(transport, protocol_version="2025-11-25") as client:
            assert (await client.call_tool("echo", {"text": "v"})).content[0].text == "v"
            assert client.protocol_version == VERSION

    run(loop, main())
    versions = [p["_meta"][PROTOCOL_VERSION] for p in transport.params()]
    assert versions == ["2025-11-25", VERSION]
    assert [h["MCP-Protocol-Version"] for h in transport.headers] == versions
    assert transport.received[0]["error"]["code"] == -32022


def test_progress_reaches_on_notification(loop: Loop, connect: Connect) -> None:
    notes: list[dict[str, Any]] = []

    async def main() -> None:
        async with Client(connect(), on_notification=notes.append) as client:
            result = await client.call_tool(
                "progress", {"steps": 3}, meta={"progressToken": "tok-1"}
            )
            assert result.content[0].text == "done after 3 steps"

    run(loop, main())
    assert [n["params"]["progress"] for n in notes] == [1, 2, 3]
    assert {n["params"]["progressToken"] for n in notes} == {"tok-1"}


def test_a_calls_progress_and_logs_reach_its_own_callbacks(loop: Loop, connect: Connect) -> None:
    """Per call: its own progressToken and log level in _meta, its notifications to its
    callbacks; another call's, and anything else, to on_notification."""
    elsewhere: list[dict[str, Any]] = []
    steps: list[tuple[float, float | None, str | None]] = []
    logs: list[Any] = []

    async def main() -> None:
        async with Client(connect(), on_notification=elsewhere.append) as client:
            done = await client.call_tool(
                "progress",
                {"steps": 2},
                on_progress=lambda progress, total, message: steps.append(
                    (progress, total, message)
                ),
            )
            assert done.content[0].text == "done after 2 steps"
            await client.call_tool("chatty", on_log=logs.append, log_level="info")
            await client.call_tool("chatty")  # no level asked: no log messages at all

    run(loop, main())
    assert steps == [(1, 2, "step 1"), (2, 2, "step 2")]
    assert [(log["level"], log["data"], log.get("logger")) for log in logs] == [
        ("info", {"said": "hello"}, "chatty")
    ]
    assert elsewhere == []


def test_a_calls_own_deadline_bounds_it_in_place_of_the_clients(
    loop: Loop, connect: Connect
) -> None:
    async def main() -> None:
        async with Client(connect(), deadline=60) as client:
            started = time.monotonic()
            with pytest.raises(DeadlineExceeded):
                await client.call_tool("slow", {"seconds": 5, "tag": "bounded"}, deadline=0.3)
            assert time.monotonic() - started < 4  # the call's 0.3 s, not the client's 60
            with pytest.raises(ValueError, match="deadline must be a positive number"):
                await client.call_tool("slow", {"seconds": 0}, deadline=0)
            done = await client.call_tool("slow", {"seconds": 0.01, "tag": "free"})
            assert done.is_error is not True  # the client's own deadline again

    run(loop, main())


def test_notifications_reach_only_their_own_request_once(
    loop: Loop, connect: Connect, kind: str
) -> None:
    notes: list[dict[str, Any]] = []

    async def main() -> None:
        async with Client(connect(), on_notification=notes.append) as client:
            await asyncio.gather(
                client.call_tool("slow", {"seconds": 0.6, "tag": f"overlap-{kind}"}),
                client.call_tool(
                    "progress", {"steps": 3, "delay": 0.05}, meta={"progressToken": "own"}
                ),
            )

    run(loop, main())
    assert [n["params"]["progress"] for n in notes] == [1, 2, 3]


def test_many_concurrent_calls_each_get_their_own_answer(loop: Loop, connect: Connect) -> None:
    transport = connect()

    async def main() -> list[str]:
        async with Client(transport, elicitation=User({"name": "N", "color": "red"})) as client:
            calls = [client.call_tool("add", {"a": i, "b": 1000}) for i in range(40)]
            flows = [client.call_tool("profile") for _ in range(5)]
            results = await asyncio.gather(*calls, *flows)
            return [text_of(r) for r in results]

    texts = run(loop, main())
    assert texts[:40] == [str(i + 1000) for i in range(40)]
    assert texts[40:] == ["name=N color=red rounds=2"] * 5
    ids = [m["id"] for m in transport.sent]
    assert len(ids) == len(set(ids)) == 50


def test_cancelling_a_call_cancels_it_on_the_server(
    loop: Loop, connect: Connect, kind: str
) -> None:
    tag = f"client-cancel-{kind}-{time.monotonic_ns()}"

    async def main() -> None:
        async with Client(connect()) as client:

            async def status() -> str:
                return text_of(await client.call_tool("run_status", {"tag": tag}))

            pending = asyncio.ensure_future(client.call_tool("slow", {"seconds": 5, "tag": tag}))
            deadline = time.monotonic() + 5
            while await status() != "started":
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pending
            while (found := await status()) == "started":
                assert time.monotonic() < deadline, "the server never saw the cancellation"
                await asyncio.sleep(0.02)
            assert found == "cancelled"

    run(loop, main())


# --- MRTR ---------------------------------------------------------------------------------


@pytest.mark.parametrize("flow", ["tool", "resource", "prompt"])
def test_a_flow_asks_for_several_inputs_at_once(
    loop: Loop, connect: Connect, flow: str, kind: str
) -> None:
    transport = connect()
    user = User({"name": "Ada", "color": "blue"})

    async def main() -> str:
        async with Client(transport, elicitation=user) as client:
            return text_of(await start(client, flow))

    assert run(loop, main()) == expected(flow, "name=Ada color=blue rounds=2")
    assert sorted(user.asked) == ["color", "name"]
    first, retry = transport.params()
    assert "inputResponses" not in first and "requestState" not in first
    interim = transport.received[0]["result"]
    assert interim["resultType"] == "input_required"
    assert retry["requestState"] == interim["requestState"]  # echoed byte for byte
    assert retry["inputResponses"] == {
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "color": {"action": "accept", "content": {"color": "blue"}},
    }
    assert retry["_meta"][CAPABILITIES] == {"elicitation": {"form": {}}}
    assert transport.sent[0]["id"] != transport.sent[1]["id"]
    if kind == "http":
        name = {"tool": "profile", "resource": "profile://me", "prompt": "profile"}[flow]
        assert [h["Mcp-Name"] for h in transport.headers] == [name, name]


@pytest.mark.parametrize("flow", ["tool", "resource", "prompt"])
def test_partial_answers_are_kept_in_state_across_rounds(
    loop: Loop, connect: Connect, flow: str
) -> None:
    transport = connect()
    rounds = iter([{"name": "Lin"}, {"color": "red"}])
    asked: list[list[str]] = []

    def user(params: dict[str, Any]) -> dict[str, Any]:
        field = next(iter(params["requestedSchema"]["properties"]))
        if not asked or field in asked[-1]:
            asked.append([])
            answers.update(next(rounds))
        asked[-1].append(field)
        if field in answers:
            return {"action": "accept", "content": {field: answers[field]}}
        return {"action": "accept", "content": {}}

    answers: dict[str, str] = {}

    async def main() -> str:
        async with Client(transport, elicitation=user) as client:
            return text_of(await start(client, flow))

    assert run(loop, main()) == expected(flow, "name=Lin color=red rounds=3")
    assert asked == [["name", "color"], ["color"]]
    states = [p.get("requestState") for p in transport.params()]
    assert states[0] is None and len(set(states[1:])) == 2, "each round seals anew"


@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize("flow", ["tool", "resource", "prompt"])
def test_decline_and_cancel_end_the_flow(
    loop: Loop, connect: Connect, flow: str, action: str
) -> None:
    user = User({"name": action, "color": "green"})

    async def main() -> str:
        async with Client(connect(), elicitation=user) as client:
            return text_of(await start(client, flow))

    word = "declined" if action == "decline" else "cancelled"
    assert run(loop, main()) == expected(flow, f"{word} name")


def test_an_answer_outside_the_requested_schema_is_refused(loop: Loop, connect: Connect) -> None:
    """The client checks its handler's answer against the form before it leaves; an
    answer sent as is (``resume`` with responses) is checked by the server, which
    refuses it without repeating it."""
    transport = connect()
    user = User({"name": "Ada", "color": "purple"})

    async def main() -> None:
        async with Client(transport, elicitation=user) as client:
            with pytest.raises(ValueError, match="does not fit the form"):
                await client.call_tool("profile")
            flow = await client.call_tool("profile", manual=True)
            assert isinstance(flow, Flow)
            asked = flow.result.model_dump(by_alias=True)["inputRequests"]
            bad = {key: {"action": "accept", "content": {"color": "purple"}} for key in asked}
            with pytest.raises(RequestError) as refused:
                await client.resume(flow, bad)
            assert refused.value.code == -32602
            assert "purple" not in refused.value.message

    run(loop, main())


def test_an_invalid_handler_answer_never_leaves_the_client(loop: Loop, connect: Connect) -> None:
    transport = connect()

    async def main() -> None:
        async with Client(transport, elicitation=lambda _: {"action": "maybe"}) as client:
            with pytest.raises(ValueError, match="invalid result"):
                await client.call_tool("profile")

    run(loop, main())
    assert len(transport.sent) == 1


def test_sampling_roots_and_elicitation_in_one_round(loop: Loop, connect: Connect) -> None:
    transport = connect()
    seen: dict[str, dict[str, Any]] = {}

    def sample(params: dict[str, Any]) -> dict[str, Any]:
        seen["sampling"] = params
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "sunny"},
            "model": "test-model",
        }

    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        seen["roots"] = params
        return {"roots": [{"uri": "file:///work/a", "name": "a"}, {"uri": "file:///work/b"}]}

    def confirm(params: dict[str, Any]) -> dict[str, Any]:
        seen["elicitation"] = params
        return {"action": "accept", "content": {"ok": True}}

    async def main() -> str:
        async with Client(
            transport, elicitation=confirm, sampling=sample, roots=list_roots
        ) as client:
            return text_of(await client.call_tool("assistant"))

    assert run(loop, main()) == (
        "summary=sunny model=test-model roots=file:///work/a,file:///work/b ok=True"
    )
    assert seen["sampling"]["maxTokens"] == 20
    assert seen["sampling"]["messages"][0]["content"]["text"] == "Summarise the weather."
    assert seen["roots"] == {}
    assert seen["elicitation"]["message"] == "Go ahead?"
    first, retry = transport.params()
    caps: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
    assert first["_meta"][CAPABILITIES] == caps and retry["_meta"][CAPABILITIES] == caps
    assert sorted(retry["inputResponses"]) == ["confirm", "roots", "summary"]
    # The handler sealed nothing; the server's state pins the three questions, and the
    # client echoes it.
    assert isinstance(retry["requestState"], str)


def _answer(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "decline"}


@pytest.mark.parametrize(
    ("options", "declared"),
    [
        ({}, {}),
        ({"elicitation": _answer}, {"elicitation": {"form": {}}}),
        ({"url_elicitation": _answer}, {"elicitation": {"url": {}}}),
        (
            {"elicitation": _answer, "url_elicitation": _answer},
            {"elicitation": {"form": {}, "url": {}}},
        ),
        ({"sampling": _answer}, {"sampling": {}}),
        (
            {"sampling": _answer, "sampling_tools": True, "sampling_context": True},
            {"sampling": {"tools": {}, "context": {}}},
        ),
        ({"sampling_tools": True, "sampling_context": True}, {}),
        ({"roots": _answer}, {"roots": {}}),
        ({"tasks": True}, TASKS),
        ({"roots": _answer, "tasks": True}, {"roots": {}, **TASKS}),
    ],
    ids=[
        "none",
        "form",
        "url",
        "form+url",
        "sampling",
        "sampling+tools",
        "no-handler",
        "roots",
        "tasks",
        "roots+tasks",
    ],
)
def test_capabilities_are_declared_only_for_installed_handlers(
    loop: Loop, connect: Connect, options: dict[str, Any], declared: dict[str, Any]
) -> None:
    transport = connect()
    options = dict(options)  # each transport's case gets the same dict
    tasks = options.pop("tasks", False)

    async def main() -> str:
        async with Client(transport, **options) as client:
            if tasks:
                TasksClient(client)
            assert client.capabilities() == expected
            return text_of(await client.call_tool("capabilities"))

    expected = declared
    assert json.loads(run(loop, main())) == expected  # what the server saw
    assert transport.params()[0]["_meta"][CAPABILITIES] == expected


@pytest.mark.parametrize(
    ("tool", "required"),
    [
        ("profile", {"elicitation": {"form": {}}}),
        ("sample", {"sampling": {}}),
        ("list_client_roots", {"roots": {}}),
        ("assistant", {"elicitation": {"form": {}}, "roots": {}, "sampling": {}}),
    ],
)
def test_a_missing_capability_is_a_request_error_naming_it(
    loop: Loop, connect: Connect, tool: str, required: dict[str, Any]
) -> None:
    async def main() -> None:
        async with Client(connect(), url_elicitation=_answer) as client:
            with pytest.raises(RequestError) as refused:
                await client.call_tool(tool)
            assert refused.value.code == -32021
            assert refused.value.required_capabilities == required

    run(loop, main())


@pytest.mark.parametrize("action", ["accept", "decline"])
def test_url_elicitation_goes_to_the_url_handler(loop: Loop, connect: Connect, action: str) -> None:
    transport = connect()
    urls: list[dict[str, Any]] = []

    def open_url(params: dict[str, Any]) -> dict[str, Any]:
        urls.append(params)
        return {"action": action}

    def form(params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("a URL request went to the form handler")

    async def main() -> str:
        async with Client(transport, elicitation=form, url_elicitation=open_url) as client:
            return text_of(await client.call_tool("visit"))

    assert run(loop, main()) == ("visited" if action == "accept" else "stayed")
    assert urls == [
        {
            "mode": "url",
            "message": "Sign in at the provider, then come back.",
            "url": "https://example.com/login",
        }
    ]
    assert transport.params()[-1]["inputResponses"] == {"visit": {"action": action}}


def test_a_form_only_client_is_refused_url_elicitation(loop: Loop, connect: Connect) -> None:
    async def main() -> None:
        async with Client(connect(), elicitation=_answer) as client:
            with pytest.raises(RequestError) as refused:
                await client.call_tool("visit")
            assert refused.value.required_capabilities == {"elicitation": {"url": {}}}

    run(loop, main())


def _persist(flow: Flow) -> str:
    result = flow.result.model_dump(mode="json", by_alias=True)
    return json.dumps({"method": flow.method, "params": flow.params, "result": result})


def _restore(text: str) -> Flow:
    data = json.loads(text)
    return Flow(data["method"], data["params"], InputRequiredResult.model_validate(data["result"]))


@pytest.mark.parametrize("flow", ["tool", "resource", "prompt"])
def test_manual_mode_and_resume_in_a_fresh_client(loop: Loop, connect: Connect, flow: str) -> None:
    first = connect()
    later = connect(fresh=True)  # over stdio: another server process, same state keys

    async def pause() -> str:
        # Manual mode: the handler is never called, but it declares the capability.
        async with Client(first, elicitation=_answer) as client:
            paused = await start(client, flow, manual=True)
        assert isinstance(paused, Flow)
        requests = paused.result.model_dump(by_alias=True)["inputRequests"]
        assert sorted(requests) == ["color", "name"]
        return _persist(paused)

    async def finish(saved: str) -> str:
        user = User({"name": "Grace", "color": "green"})
        async with Client(later, elicitation=user) as client:
            return text_of(await client.resume(_restore(saved)))

    saved = run(loop, pause())
    assert run(loop, finish(saved)) == expected(flow, "name=Grace color=green rounds=2")
    assert len(first.sent) == 1
    (retry,) = later.params()
    assert retry["requestState"] == json.loads(saved)["result"]["requestState"]


def test_resume_with_given_answers_step_by_step(loop: Loop, connect: Connect) -> None:
    transport = connect()

    async def main() -> tuple[list[list[str]], str]:
        rounds: list[list[str]] = []
        given = iter([{"name": "Ken"}, {"color": "blue"}])
        async with Client(transport, elicitation=_answer) as client:
            step = await client.call_tool("profile", manual=True)
            while isinstance(step, Flow):
                asked = sorted(step.result.model_dump(by_alias=True)["inputRequests"])
                rounds.append(asked)
                answers = {
                    key: {"action": "accept", "content": {key: value}}
                    for key, value in next(given).items()
                }
                step = await client.resume(_restore(_persist(step)), answers, manual=True)
            return rounds, text_of(step)

    rounds, final = run(loop, main())
    assert rounds == [["color", "name"], ["color"]]
    assert final == "name=Ken color=blue rounds=3"


def test_max_rounds_bounds_a_flow(loop: Loop, connect: Connect) -> None:
    transport = connect()

    async def main() -> None:
        async with Client(transport, max_rounds=3, backoff=(0.001, 0.002)) as client:
            with pytest.raises(TooManyRounds):
                await client.call_tool("warmup", {"rounds": 5})
        assert len(transport.sent) == 3
        async with Client(connect(), max_rounds=6, backoff=(0.001, 0.002)) as client:
            assert text_of(await client.call_tool("warmup", {"rounds": 5})) == (
                "ready after 5 retries"
            )

    run(loop, main())


def test_state_only_rounds_back_off(loop: Loop, connect: Connect) -> None:
    transport = connect()

    async def main() -> str:
        async with Client(transport, backoff=(0.04, 0.1)) as client:
            return text_of(await client.call_tool("warmup", {"rounds": 4}))

    assert run(loop, main()) == "ready after 4 retries"
    gaps = [b - a for a, b in zip(transport.times, transport.times[1:], strict=False)]
    assert len(gaps) == 4
    for gap, wanted in zip(gaps, [0.04, 0.08, 0.1, 0.1], strict=True):
        assert gap >= wanted * 0.9, (gaps, "retries came sooner than the backoff")
    for params in transport.params()[1:]:
        assert isinstance(params["requestState"], str)
        assert not params.get("inputResponses")


def test_a_deadline_bounds_a_flow(loop: Loop, connect: Connect) -> None:
    async def main() -> None:
        async with Client(connect(), deadline=0.1, backoff=(0.05, 0.05)) as client:
            with pytest.raises(TooManyRounds):
                await client.call_tool("warmup", {"rounds": 50})

    run(loop, main())


def test_resume_is_bounded_by_max_rounds_too(loop: Loop, connect: Connect) -> None:
    transport = connect()

    async def main() -> None:
        async with Client(transport, max_rounds=3, backoff=(0.001, 0.002)) as client:
            paused = await client.call_tool("warmup", {"rounds": 8}, manual=True)
            assert isinstance(paused, Flow)
            with pytest.raises(TooManyRounds):
                await client.resume(paused)

    run(loop, main())


# --- listings, completion, listen ----------------------------------------------------


def test_lists_follow_cursors(loop: Loop, connect: Connect) -> None:
    transport = connect()

    async def main() -> dict[str, list[Any]]:
        async with Client(transport) as client:
            return {
                "tools": await client.list_tools(),
                "prompts": await client.list_prompts(),
                "resources": await client.list_resources(),
                "templates": await client.list_resource_templates(),
            }

    found = run(loop, main())
    names = [tool.name for tool in found["tools"]]
    assert names == list(servers.server.registry.tools), "every page, in order"
    assert [p.name for p in found["prompts"]] == ["profile", "greet"]
    uris = [r.uri for r in found["resources"]]
    assert uris == ["profile://me", "data://greeting", "note://café/menu"]
    assert found["templates"] == []
    listed = transport.params("tools/list")
    pages = -(-len(servers.server.registry.tools) // servers.PAGE_SIZE)
    assert len(listed) == pages >= 3
    assert "cursor" not in listed[0] and all(isinstance(p["cursor"], str) for p in listed[1:])


def test_listed_header_params_travel_in_headers(loop: Loop, connect: Connect, kind: str) -> None:
    transport = connect()
    arguments = {"region": "Zürich", "count": 3, "flag": False, "note": "n"}

    async def main() -> str:
        async with Client(transport) as client:
            await client.list_tools()
            return text_of(await client.call_tool("headed", arguments))

    assert json.loads(run(loop, main())) == arguments
    headers = transport.headers[-1]
    assert headers["Mcp-Param-Region"] == "=?base64?WsO8cmljaA==?="
    assert headers["Mcp-Param-Count"] == "3"
    assert headers["Mcp-Param-Flag"] == "false"
    assert not any(h.lower() == "mcp-param-note" for h in headers)


def test_an_unlisted_header_tool_is_listed_then_called_again_over_http(
    loop: Loop, connect: Connect, kind: str
) -> None:
    """Without tools/list the client cannot know the Mcp-Param headers a tool needs: the
    server refuses the call with -32020, and the client lists the tools and calls again
    once, with the headers (server/tools.mdx)."""
    transport = connect()

    async def main() -> str:
        async with Client(transport) as client:
            return text_of(await client.call_tool("headed", {"region": "eu"}))

    assert run(loop, main()) == '{"region": "eu"}'
    methods = [h.get("Mcp-Method") for h in transport.headers]
    calls = methods[methods.index("tools/call") :]
    if kind == "http":
        assert calls[0] == "tools/call" and calls[-1] == "tools/call"
        assert set(calls[1:-1]) == {"tools/list"}  # every page of the listing
        assert transport.headers[-1]["Mcp-Param-Region"] == "eu"
    else:  # no HTTP headers to mirror: the first call is served
        assert calls == ["tools/call"]


def test_a_tool_whose_header_params_changed_is_listed_again_and_called(
    loop: Loop, connect: Connect, kind: str
) -> None:
    transport = connect(fresh=True)

    async def main() -> str:
        async with Client(transport) as client:
            await client.list_tools()  # moving mirrors region as Mcp-Param-Region
            await client.call_tool("move_header")  # now as Mcp-Param-Zone
            return text_of(await client.call_tool("moving", {"region": "eu"}))

    assert run(loop, main()) == '{"region": "eu"}'
    if kind == "http":
        assert transport.headers[-1]["Mcp-Param-Zone"] == "eu"


def test_a_non_ascii_uri_is_read(loop: Loop, connect: Connect, kind: str) -> None:
    transport = connect()

    async def main() -> str:
        async with Client(transport) as client:
            return text_of(await client.read_resource("note://café/menu"))

    assert run(loop, main()) == "croissant"
    assert transport.headers[-1]["Mcp-Name"] == "=?base64?bm90ZTovL2NhZsOpL21lbnU=?="


def test_complete(loop: Loop, connect: Connect) -> None:
    async def main() -> None:
        async with Client(connect()) as client:
            ref = {"type": "ref/prompt", "name": "greet"}
            completed = await client.complete(ref, "name", "al")
            assert completed.model_dump(mode="json", by_alias=True)["completion"] == {
                "values": ["alice", "albert"],
                "total": 2,
                "hasMore": False,
            }
            assert (await client.complete(ref, "name", "z")).completion.values == []
            with pytest.raises(RequestError):
                await client.complete({"type": "ref/prompt", "name": "nope"}, "name", "a")

    run(loop, main())


def test_listen_is_an_async_iterator(loop: Loop, connect: Connect, kind: str) -> None:
    transport = connect()

    async def count(client: Client) -> int:
        return int(text_of(await client.call_tool("open_subscriptions")))

    async def main() -> None:
        async with Client(transport) as client:
            before = await count(client)
            listening = client.listen(toolsListChanged=True, promptsListChanged=True)
            async with contextlib.aclosing(generator(listening)) as stream:
                ack = await anext(stream)
                assert ack["method"] == "notifications/subscriptions/acknowledged"
                listen_id = transport.sent[-1]["id"]
                assert ack["params"]["_meta"] == {
                    "io.modelcontextprotocol/subscriptionId": listen_id
                }
                assert ack["params"]["notifications"] == {
                    "toolsListChanged": True,
                    "promptsListChanged": True,
                }
                assert await count(client) == before + 1
                assert text_of(await client.call_tool("touch_tools")) != "0"
                changed = await asyncio.wait_for(anext(stream), 5)
                assert changed["method"] == "notifications/tools/list_changed"
                assert changed["params"]["_meta"] == {
                    "io.modelcontextprotocol/subscriptionId": listen_id
                }
            deadline = time.monotonic() + 5
            while await count(client) != before:
                assert time.monotonic() < deadline, "the subscription outlived the iterator"
                await asyncio.sleep(0.05)

    run(loop, main())


def test_exchanges_close_their_own_streams(loop: Loop, connect: Connect) -> None:
    """A request that has its answer, and a listen stream closed early, close what they
    opened (HTTP: the response) themselves: none of snodo's generators is left for the
    loop to finalize."""
    transport = connect()
    finalized: list[str] = []

    async def main() -> None:
        first_iteration, finalizer = sys.get_asyncgen_hooks()
        assert finalizer is not None

        def record(generator: AsyncGenerator[Any, None]) -> None:
            if Path(generator.ag_code.co_filename).is_relative_to(SNODO):
                finalized.append(generator.__qualname__)  # httpx's own are its business
            finalizer(generator)

        sys.set_asyncgen_hooks(first_iteration, record)
        try:
            async with Client(transport) as client:
                await client.call_tool("add", {"a": 1, "b": 2})
                await client.call_tool(
                    "progress", {"steps": 2}, meta={"progressToken": "t"}
                )  # answered on an SSE stream
                listening = client.listen(toolsListChanged=True)
                async with contextlib.aclosing(generator(listening)) as stream:
                    await anext(stream)
        finally:
            sys.set_asyncgen_hooks(first_iteration, finalizer)

    run(loop, main())
    assert finalized == []


def test_closing_listen_closes_the_subscription_at_once(loop: Loop) -> None:
    async def main() -> None:
        async with Client(MemoryTransport(servers.server)) as client:
            before = len(list(servers.server.subscriptions))
            listening = client.listen(toolsListChanged=True)
            async with contextlib.aclosing(generator(listening)) as stream:
                await anext(stream)
                assert len(list(servers.server.subscriptions)) == before + 1
            assert len(list(servers.server.subscriptions)) == before

    try:
        run(loop, main())
    finally:
        run(loop, asyncio.sleep(0.05))  # let the finaliser close what the test left open


def test_two_listeners_each_get_their_own_stream(loop: Loop, connect: Connect) -> None:
    async def main() -> None:
        async with Client(connect()) as client:
            first_stream = client.listen(toolsListChanged=True)
            second_stream = client.listen(toolsListChanged=True)
            async with (
                contextlib.aclosing(generator(first_stream)) as first,
                contextlib.aclosing(generator(second_stream)) as second,
            ):
                ids = [
                    (await anext(s))["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
                    for s in (first, second)
                ]
                assert ids[0] != ids[1]
                await client.call_tool("touch_tools")
                got = [await asyncio.wait_for(anext(s), 5) for s in (first, second)]
                assert [
                    g["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for g in got
                ] == ids

    run(loop, main())


@pytest.fixture(autouse=True)
def _no_leftover_tasks(loop: Loop) -> Iterator[None]:
    yield
    # A generator dropped mid-stream (httpx's own, under a closed response) is closed by
    # a task the loop makes for it, and closing one drops the next; those get a moment
    # to finish, anything else none.
    for _ in range(20):
        closing = [t for t in asyncio.all_tasks(loop.loop) if "athrow" in repr(t.get_coro())]
        if not closing:
            break
        loop.loop.run_until_complete(asyncio.wait(closing, timeout=1))
    pending = [t for t in asyncio.all_tasks(loop.loop) if not t.done()]
    stdio_readers = [t for t in pending if "StdioTransport._read" in repr(t.get_coro())]
    assert len(pending) == len(stdio_readers), f"tasks left running: {pending}"
