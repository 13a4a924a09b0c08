"""The core's request path (``snodo.core.request_path.answer``) run from a bare answerer:
a method table and an offering of a few lines, no ``Server``. What it shows is the core's
promise: framing, ``_meta``, the revision's checks, sealed state, admission and the
middleware chain, for any table it is handed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from snodo.asking import elicitation
from snodo.core.caching import CacheHint
from snodo.core.context import Context
from snodo.core.errors import UnsupportedProtocolVersion
from snodo.core.observe import QUIET, Observer
from snodo.core.request_path import Reply, answer
from snodo.core.result import input_required
from snodo.core.state.keyring import Keyring
from snodo.core.types import CallNext, ExtensionMethod, MethodHandler, Middleware
from snodo.revisions import REVISIONS
from tests.support.wire import request

VERSION = "2026-07-28"
REVISION = REVISIONS.of(VERSION)
FORM = elicitation.form("Your name?", {"type": "object", "properties": {"n": {"type": "string"}}})
INFO = {"io.modelcontextprotocol/serverInfo": {"name": "bare", "version": "0"}}
ran: list[str] = []


async def greet(offering: Any, ctx: Context, params: Mapping[str, Any]) -> Any:
    ran.append(ctx.request_method)
    reply = elicitation.response(ctx, "name", FORM)
    if not isinstance(reply, elicitation.Accepted):
        return input_required({"name": FORM}, state={"round": 1})
    assert ctx.state_data == {"round": 1}
    return {"content": [{"type": "text", "text": f"hello {reply.content['n']}"}]}


async def broken(offering: Any, ctx: Context, params: Mapping[str, Any]) -> Any:
    raise RuntimeError("disk on fire")


async def listing(offering: Any, ctx: Context, params: Mapping[str, Any]) -> Any:
    return {"tools": []}


@dataclass
class BareOffering:
    methods: Mapping[str, MethodHandler]
    supported_versions: tuple[str, ...] = (VERSION,)
    revisions: dict[str, Any] = field(default_factory=lambda: {VERSION: REVISION})
    tables: dict[str, Any] = field(
        default_factory=lambda: {VERSION: (dict(REVISION.methods), REVISION)}
    )
    extension_methods: Mapping[str, ExtensionMethod] = field(default_factory=dict)

    def offers(self, method: str) -> bool:
        return True


@dataclass
class Lifespan:
    value: Any = None


@dataclass
class BareAnswerer:
    offering: BareOffering
    middlewares: list[Middleware] = field(default_factory=list)
    keyring: Keyring = field(default_factory=lambda: Keyring(secret=b"k" * 32))
    authorization: object | None = None
    lifespans: Lifespan = field(default_factory=Lifespan)
    clock: Callable[[], float] = time.time
    cache: dict[str, CacheHint] = field(default_factory=dict)
    infos: dict[str, MappingProxyType[str, Any]] = field(
        default_factory=lambda: {
            VERSION: MappingProxyType(INFO["io.modelcontextprotocol/serverInfo"])
        }
    )
    observer: Observer = QUIET
    caller_space: Any = None
    answer_checks: Any = None

    def check_version(self, version: str) -> None:
        if version not in self.offering.supported_versions:
            raise UnsupportedProtocolVersion(version, list(self.offering.supported_versions))


def _answer(answerer: BareAnswerer, message: Any) -> Reply:
    return asyncio.run(answer(answerer, message, None, "inproc", None, None, None))


def _bare(**methods: MethodHandler) -> BareAnswerer:
    return BareAnswerer(BareOffering(methods))


CALL: dict[str, Any] = {"name": "greet", "arguments": {}}
ASKING: dict[str, Any] = {"elicitation": {"form": {}}}


def test_a_round_trip_through_a_table_the_core_is_handed() -> None:
    bare = _bare(**{"tools/call": greet})
    first = _answer(bare, request("tools/call", CALL, capabilities=ASKING)).response
    assert first is not None
    result = first["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {"name": FORM}
    assert result["_meta"] == INFO
    retry = {
        **CALL,
        "inputResponses": {"name": {"action": "accept", "content": {"n": "Ada"}}},
        "requestState": result["requestState"],
    }
    second = _answer(bare, request("tools/call", retry, id=2, capabilities=ASKING)).response
    assert second == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "hello Ada"}],
            "_meta": INFO,
        },
    }


def test_a_forged_state_never_reaches_the_handler() -> None:
    bare = _bare(**{"tools/call": greet})
    ran.clear()
    forged = {**CALL, "requestState": "forged.token", "inputResponses": {}}
    reply = _answer(bare, request("tools/call", forged, capabilities=ASKING))
    assert reply.error_code == -32602
    assert ran == []


def test_a_client_that_cannot_answer_gets_one_capability_error() -> None:
    reply = _answer(_bare(**{"tools/call": greet}), request("tools/call", CALL))
    assert reply.error_code == -32021
    assert reply.response is not None
    assert reply.response["error"]["data"] == {
        "requiredCapabilities": {"elicitation": {"form": {}}}
    }


def test_what_the_table_lacks_is_not_found_and_a_bad_version_is_named() -> None:
    bare = _bare(**{"tools/list": listing})
    assert _answer(bare, request("prompts/list")).error_code == -32601
    message = request("tools/list")
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "1999-01-01"
    reply = _answer(bare, message)
    assert reply.response is not None
    assert reply.response["error"]["data"]["supported"] == [VERSION]


def test_a_message_without_its_meta_is_invalid_params() -> None:
    bare = _bare(**{"tools/list": listing})
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    assert _answer(bare, message).error_code == -32602


def test_a_handler_that_raises_is_an_internal_error_that_tells_nothing() -> None:
    reply = _answer(_bare(**{"tools/list": broken}), request("tools/list"))
    assert reply.error_code == -32603
    assert "disk" not in repr(reply.response)


def test_malformed_bytes_are_a_parse_error_and_notifications_get_no_reply() -> None:
    bare = _bare(**{"tools/list": listing})
    assert _answer(bare, b"{not json").error_code == -32700
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
    assert _answer(bare, note).response is None


def test_middleware_runs_around_the_handler_in_order() -> None:
    seen: list[str] = []

    def named(name: str) -> Middleware:
        async def middleware(ctx: Context, call_next: CallNext) -> Any:
            seen.append(f"{name}>")
            outcome = await call_next(ctx)
            seen.append(f"<{name}")
            return outcome

        return middleware

    bare = _bare(**{"tools/list": listing})
    bare.middlewares = [named("outer"), named("inner")]
    reply = _answer(bare, request("tools/list"))
    assert reply.response is not None and reply.response["result"]["tools"] == []
    assert seen == ["outer>", "inner>", "<inner", "<outer"]
