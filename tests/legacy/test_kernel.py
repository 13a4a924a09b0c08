"""The legacy kernel and the bridge, in process: literal wire JSON in and out.

A scripted peer plays the legacy client: it answers the server-to-client requests the
bridge sends (or does not), and records every message the server sends it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from snodo import Limits
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.server.legacy_limits import LegacyLimits
from tests.legacy.oracle import RESULTS, check_response, check_sent, problems
from tests.legacy.servers import server

Answer = Callable[[dict[str, Any]], dict[str, Any] | None]
FORM_CLIENT = {"elicitation": {}}
FORM_INFO = {"name": "test-client", "version": "1.0"}


def synchronous(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test on its own event loop (the suite uses no async plugin)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def accept_name(message: dict[str, Any]) -> dict[str, Any]:
    return {"result": {"action": "accept", "content": {"name": "Ada"}}}


class Peer:
    def __init__(self, answer: Answer | None = None, limits: LegacyLimits | None = None) -> None:
        self.kernel = LegacyKernel(server)
        self.session = LegacySession(limits or LegacyLimits())
        self.sent: list[dict[str, Any]] = []
        self.unsolicited: list[dict[str, Any]] = []
        self.session.notify = self.record
        self.answer = answer

    def record(self, message: dict[str, Any]) -> None:
        check_sent(message)
        self.unsolicited.append(message)

    def emit(self, message: dict[str, Any]) -> None:
        check_sent(message)
        self.sent.append(message)
        if "id" in message and "method" in message and self.answer is not None:
            reply = self.answer(message)
            if reply is not None:
                asyncio.get_running_loop().call_soon(
                    self.session.resolve, message["id"], reply.get("result"), reply.get("error")
                )

    async def call(self, request_id: int, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        reply = await self.kernel.handle(self.session, message, transport="test", emit=self.emit)
        assert reply.response is not None
        if method in RESULTS:
            check_response(method, reply.response)
        return reply.response

    async def initialize(
        self, capabilities: dict[str, Any] | None = None, version: str = "2025-11-25"
    ) -> dict[str, Any]:
        return await self.call(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": FORM_CLIENT if capabilities is None else capabilities,
                "clientInfo": {"name": "test-client", "version": "1.0"},
            },
        )

    def requests(self) -> list[dict[str, Any]]:
        return [m for m in self.sent if "id" in m and "method" in m]


@synchronous
async def test_initialize_answers_in_the_legacy_shape() -> None:
    assert await Peer().initialize() == {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "logging": {},
                "tools": {"listChanged": True},
                "resources": {"listChanged": True, "subscribe": True},
            },
            "serverInfo": {"name": "legacy-test-server", "version": "1.0.0"},
        },
    }


@pytest.mark.parametrize(
    ("asked", "answered"),
    [("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"), ("2024-01-01", "2025-11-25")],
)
@synchronous
async def test_initialize_negotiates_the_version(asked: str, answered: str) -> None:
    response = await Peer().initialize(version=asked)
    assert response["result"]["protocolVersion"] == answered


@synchronous
async def test_requests_before_initialize_and_a_second_initialize_are_refused() -> None:
    peer = Peer()
    assert (await peer.call(1, "ping"))["error"]["code"] == -32600
    await peer.initialize()
    assert (await peer.initialize())["error"]["code"] == -32600
    assert await peer.call(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}


@pytest.mark.parametrize("method", ["server/discover", "subscriptions/listen", "tasks/list"])
@synchronous
async def test_methods_of_the_other_era_are_not_found(method: str) -> None:
    peer = Peer()
    await peer.initialize()
    assert (await peer.call(1, method, {}))["error"]["code"] == -32601


@synchronous
async def test_a_form_flow_runs_through_real_requests_with_sealed_state() -> None:
    peer = Peer(accept_name)
    await peer.initialize()
    response = await peer.call(7, "tools/call", {"name": "greet", "arguments": {}})
    assert peer.requests() == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            },
        }
    ]
    # No resultType, ttlMs, cacheScope or serverInfo stamp: the legacy shape.
    assert response == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"content": [{"type": "text", "text": "Hello, Ada (round 2)"}]},
    }


@synchronous
async def test_retry_fields_sent_by_a_legacy_client_are_ignored() -> None:
    peer = Peer(accept_name)
    await peer.initialize()
    forged = {"name": {"action": "accept", "content": {"name": "Mallory"}}}
    params = {"name": "greet", "inputResponses": forged, "requestState": "v1.x.y.z"}
    response = await peer.call(1, "tools/call", params)
    assert response["result"]["content"][0]["text"] == "Hello, Ada (round 2)"


@synchronous
async def test_url_mode_gets_an_elicitation_id() -> None:
    peer = Peer(lambda message: {"result": {"action": "accept"}})
    await peer.initialize({"elicitation": {"form": {}, "url": {}}})
    response = await peer.call(1, "tools/call", {"name": "sign_in"})
    (request,) = peer.requests()
    params = request["params"]
    assert params["mode"] == "url" and params["url"] == "https://example.com/sign-in"
    assert isinstance(params["elicitationId"], str) and len(params["elicitationId"]) >= 16
    assert response["result"] == {"content": [{"type": "text", "text": "consented"}]}
    # The flow went past the page: the client hears that the interaction completed.
    assert peer.sent[-1] == {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": params["elicitationId"]},
    }


@synchronous
async def test_a_declined_url_elicitation_is_not_said_to_complete() -> None:
    peer = Peer(lambda message: {"result": {"action": "decline"}})
    await peer.initialize({"elicitation": {"form": {}, "url": {}}})
    response = await peer.call(1, "tools/call", {"name": "sign_in"})
    assert response["result"] == {"content": [{"type": "text", "text": "refused"}]}
    assert [m.get("method") for m in peer.sent] == ["elicitation/create"]


@synchronous
async def test_a_missing_capability_is_a_tool_error_and_a_resource_error() -> None:
    peer = Peer(accept_name)
    await peer.initialize({})
    tool = await peer.call(1, "tools/call", {"name": "poem"})
    assert tool["result"]["isError"] is True
    assert "capability" in tool["result"]["content"][0]["text"]
    assert '"sampling": {}' in tool["result"]["content"][0]["text"]
    resource = await peer.call(2, "resources/read", {"uri": "test://profile"})
    assert resource["error"]["code"] == -32021
    assert resource["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert peer.requests() == []


@synchronous
async def test_a_resource_flow_completes() -> None:
    peer = Peer(accept_name)
    await peer.initialize()
    response = await peer.call(1, "resources/read", {"uri": "test://profile"})
    assert response["result"] == {
        "contents": [{"uri": "test://profile", "mimeType": "text/plain", "text": "profile of Ada"}]
    }


@synchronous
async def test_an_invalid_answer_is_invalid_params() -> None:
    peer = Peer(lambda message: {"result": {"action": "accept", "content": {"name": 5}}})
    await peer.initialize()
    response = await peer.call(1, "tools/call", {"name": "greet"})
    assert response["error"]["code"] == -32602


@synchronous
async def test_an_error_answer_ends_the_flow() -> None:
    peer = Peer(lambda message: {"error": {"code": -1, "message": "user closed the dialog"}})
    await peer.initialize()
    response = await peer.call(1, "tools/call", {"name": "greet"})
    assert response["result"] == {
        "content": [{"type": "text", "text": "Input was not given: user closed the dialog"}],
        "isError": True,
    }


@synchronous
async def test_rounds_are_bounded() -> None:
    peer = Peer(accept_name, LegacyLimits(max_rounds=3))
    await peer.initialize()
    response = await peer.call(1, "tools/call", {"name": "never_satisfied"})
    assert response["result"]["isError"] is True
    assert response["result"]["content"][0]["text"] == "Input was asked for too many rounds"
    assert len(peer.requests()) == 3


@synchronous
async def test_each_round_waits_a_bounded_time_and_tells_the_client_it_gave_up() -> None:
    peer = Peer(lambda message: None, LegacyLimits(round_timeout=0.05))
    await peer.initialize()
    response = await peer.call(1, "tools/call", {"name": "greet"})
    assert response["result"]["isError"] is True
    assert peer.sent[-1] == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "timed out"},
    }
    assert peer.session.pending == 0


@synchronous
async def test_pending_requests_per_session_are_bounded() -> None:
    peer = Peer(accept_name, LegacyLimits(max_pending_requests=2))
    await peer.initialize()
    response = await peer.call(1, "tools/call", {"name": "three_at_once"})
    assert response["result"]["isError"] is True
    assert "too many requests" in response["result"]["content"][0]["text"]
    assert peer.session.pending == 0


@synchronous
async def test_cancelling_the_request_cancels_what_the_client_was_asked() -> None:
    peer = Peer(lambda message: None)
    await peer.initialize()
    task = asyncio.ensure_future(peer.call(1, "tools/call", {"name": "greet"}))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if peer.session.pending:
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert peer.sent[-1]["method"] == "notifications/cancelled"
    assert peer.sent[-1]["params"]["requestId"] == 1
    assert peer.session.pending == 0


@synchronous
async def test_set_level_feeds_the_log_gate() -> None:
    quiet = Peer(limits=LegacyLimits(log_level=None))
    await quiet.initialize()
    await quiet.call(1, "tools/call", {"name": "chatty"})
    assert quiet.sent == []  # no default level and none set: nothing logged
    peer = Peer()
    await peer.initialize()
    await peer.call(1, "tools/call", {"name": "chatty"})
    info = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "info detail"},
    }
    assert peer.sent == [info]  # no level set: the default, info and above
    peer.sent.clear()
    assert await peer.call(2, "logging/setLevel", {"level": "error"}) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }
    await peer.call(3, "tools/call", {"name": "chatty"})
    assert peer.sent == []  # the client raised the bar
    assert await peer.call(2, "logging/setLevel", {"level": "info"}) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }
    await peer.call(3, "tools/call", {"name": "chatty"})
    assert peer.sent == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "info detail"},
        }
    ]
    assert (await peer.call(4, "logging/setLevel", {"level": "loud"}))["error"]["code"] == -32602
    with pytest.raises(ValueError, match="log_level must be one of"):
        LegacyLimits(log_level="loud")


@synchronous
async def test_subscriptions_feed_the_servers_bus_and_end_with_the_session() -> None:
    peer = Peer()
    await peer.initialize()
    assert (await peer.call(1, "resources/subscribe", {"uri": "test://profile"}))["result"] == {}
    assert server.notify_resource_updated("test://profile") >= 1
    server.notify_list_changed("tools")
    assert peer.unsolicited == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "test://profile"},
        },
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
    ]
    await peer.call(2, "resources/unsubscribe", {"uri": "test://profile"})
    server.notify_resource_updated("test://profile")
    assert len(peer.unsolicited) == 2
    peer.session.close()
    server.notify_list_changed("tools")
    assert len(peer.unsolicited) == 2


@synchronous
async def test_subscriptions_per_session_are_bounded() -> None:
    peer = Peer(limits=LegacyLimits(max_subscriptions=2))
    await peer.initialize()
    for n in range(2):
        assert "result" in await peer.call(n, "resources/subscribe", {"uri": f"test://r{n}"})
    refused = await peer.call(9, "resources/subscribe", {"uri": "test://r9"})
    assert refused["error"]["code"] == -32602
    peer.session.close()


@synchronous
async def test_listings_validate_against_the_legacy_schema() -> None:
    peer = Peer()
    await peer.initialize()
    tools = await peer.call(1, "tools/list", {})
    assert [tool["name"] for tool in tools["result"]["tools"]][:2] == ["greet", "sign_in"]
    resources = await peer.call(2, "resources/list")
    assert resources["result"]["resources"][0]["uri"] == "test://profile"
    await peer.call(3, "resources/templates/list", {})
    await peer.call(4, "prompts/list", {})  # no prompts: not offered, -32601
    with_cursor = await peer.call(5, "tools/list", {"cursor": "not-a-cursor"})
    assert with_cursor["error"]["code"] == -32602


def test_the_oracle_refuses_malformed_messages() -> None:
    assert problems("CallToolResult", {"content": "text"}) != []
    url_without_id = {"mode": "url", "message": "m", "url": "https://example.com/"}
    request = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": url_without_id}
    assert problems("ServerRequest", request) != []


@synchronous
async def test_only_the_exact_id_completes_a_request() -> None:
    peer = Peer()
    await peer.initialize()
    task = asyncio.ensure_future(peer.call(1, "tools/call", {"name": "greet"}))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if peer.session.pending:
            break
    answer = {"action": "accept", "content": {"name": "Ada"}}
    assert not peer.session.resolve(True, answer, None)  # JSON true is not the id 1
    assert not peer.session.resolve("1", answer, None)
    assert not peer.session.resolve(2, answer, None)
    assert peer.session.resolve(1, answer, None)
    assert not peer.session.resolve(1, answer, None)  # answered once only
    assert (await task)["result"]["content"][0]["text"] == "Hello, Ada (round 2)"


def test_every_legacy_method_is_answered_by_the_kernel_or_the_core() -> None:
    from snodo.legacy.methods import OWN
    from snodo.legacy.wire import FORWARDED
    from snodo_wire_2025_11_25.tables import METHODS

    assert frozenset(METHODS) == OWN | FORWARDED
    assert not OWN & FORWARDED
    assert "tools/call" in FORWARDED and "initialize" in OWN


@synchronous
async def test_legacy_sessions_do_not_take_listen_stream_slots() -> None:
    from snodo.server import Server

    small = Server("small", "1.0.0", limits=Limits(listen_streams=1))
    kernel = LegacyKernel(small)
    sessions = [LegacySession(LegacyLimits()) for _ in range(3)]
    for session in sessions:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": FORM_INFO}
        message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        reply = await kernel.handle(session, message, emit=lambda note: None)
        assert reply.response is not None and "result" in reply.response
    stream = small.subscriptions.open(1, {"toolsListChanged": True}, lambda note: None)
    assert small.notify_list_changed("tools") == 4  # three sessions and the one stream
    for session in sessions:
        session.close()
    small.subscriptions.close(stream)
    assert small.notify_list_changed("tools") == 0
