"""``Server(spec=Spec(check_answers=True))``: every answer validated against the models of its
request's revision, the invalid ones logged with where they fail; off, nothing checked."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from snodo.core.context import Context
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.server import Server, Spec
from snodo.server.answer_checks import CHECK_ENV, RECORD_ENV, AnswerChecks, checking
from snodo.server.legacy_limits import LegacyLimits
from snodo.server.subscriptions import Subscription

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def _call(name: str, id: int = 1, **meta: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                **meta,
            },
        },
    }


def _broken(check: bool | None) -> Server:
    """A server a middleware makes answer outside its revision: content must be a list."""
    server = Server("broken", "1.0", spec=Spec(check_answers=check))

    @server.tool
    def echo() -> str:
        return "hi"

    @server.middleware
    async def garble(ctx: Context, call_next: Any) -> Any:
        result = await call_next(ctx)
        return {**result, "content": "not a list of blocks"}

    return server


@pytest.mark.invalid_answers
def test_an_invalid_answer_is_logged_once_with_its_path(
    caplog: pytest.LogCaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "invalid.jsonl"
    monkeypatch.setenv(RECORD_ENV, str(record))
    server = _broken(True)
    assert server.answer_checks is not None
    with caplog.at_level(logging.ERROR, logger="snodo.answers"):
        for id in (1, 2):
            reply = asyncio.run(server.handle(_call("echo", id)))
            assert reply.response is not None
            assert reply.response["result"]["content"] == "not a list of blocks"  # still sent
    told = [r.getMessage() for r in caplog.records if r.name == "snodo.answers"]
    assert told == [
        f"invalid answer: tools/call answered outside revision {MODERN} at result.content:"
        " Input should be a valid list"
    ]
    assert [str(i) for i in server.answer_checks.invalid] == [
        told[0][len("invalid answer: ") :]
    ] * 2
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(i["method"], i["version"], i["path"]) for i in lines] == [
        ("tools/call", MODERN, "result.content")
    ] * 2


def test_checking_is_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHECK_ENV, "0")
    assert _broken(None).answer_checks is None
    assert checking(None) is False
    monkeypatch.setenv(CHECK_ENV, "1")
    assert _broken(None).answer_checks is not None
    assert _broken(False).answer_checks is None  # the argument wins
    monkeypatch.delenv(CHECK_ENV)
    assert checking(None) is False


def test_a_valid_answer_and_its_notifications_are_not_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("fine", "1.0", spec=Spec(check_answers=True))

    @server.tool
    def noisy(ctx: Context) -> str:
        ctx.log("info", {"step": 1})
        ctx.report_progress(1, 2)
        return "done"

    message = _call("noisy", **{"io.modelcontextprotocol/logLevel": "debug", "progressToken": 7})
    streamed: list[dict[str, Any]] = []
    reply = asyncio.run(server.handle(message, emit=streamed.append))
    assert reply.response is not None and reply.response["result"]["content"]
    assert [note["method"] for note in streamed] == [
        "notifications/message",
        "notifications/progress",
    ]
    assert server.answer_checks is not None and server.answer_checks.invalid == []
    unknown = asyncio.run(server.handle(_call("missing")))
    assert unknown.response is not None and unknown.response["error"]["code"] == -32602
    assert server.answer_checks.invalid == []  # an error of the revision is an answer too
    assert not [r for r in caplog.records if r.name == "snodo.answers"]


@pytest.mark.invalid_answers
def test_a_notification_outside_the_revision_is_reported() -> None:
    """A handler that streams a notification the revision does not define, by hand: the
    check names it (the server's own notifications never are: ``Context.notify``)."""
    server = Server("noisy", "1.0", spec=Spec(check_answers=True))

    @server.tool
    def stray(ctx: Context) -> str:
        ctx.emit({"jsonrpc": "2.0", "method": "notifications/made_up", "params": {}})
        assert ctx.notify("notifications/made_up", {}) is False  # the revision lacks it
        return "done"

    asyncio.run(server.handle(_call("stray"), emit=lambda note: None))
    assert server.answer_checks is not None
    (found,) = server.answer_checks.invalid
    assert (found.method, found.path) == ("notifications/made_up", "method")


@pytest.mark.invalid_answers
def test_a_legacy_session_is_checked_with_its_own_revision() -> None:
    """Within a legacy session, answers and the messages streamed to the client are
    checked with the session's revision."""
    server = Server("legacy", "1.0", spec=Spec(check_answers=True))

    @server.tool
    def stray(ctx: Context) -> str:
        ctx.emit({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged"})
        return "done"

    async def run() -> list[dict[str, Any]]:
        kernel, session = LegacyKernel(server), LegacySession(LegacyLimits())
        sent: list[dict[str, Any]] = []
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        }
        await kernel.handle(session, initialize, emit=sent.append)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "stray"}}
        reply = await kernel.handle(session, call, emit=sent.append)
        assert reply.response is not None
        assert reply.response["result"]["content"] == [{"type": "text", "text": "done"}]
        return sent

    sent = asyncio.run(run())
    assert [note["method"] for note in sent] == ["notifications/subscriptions/acknowledged"]
    assert server.answer_checks is not None
    found = [(i.version, i.method, i.path) for i in server.answer_checks.invalid]
    # 2025-11-25 has no such notification (the modern bridge round's check saw it first).
    assert (LEGACY, "notifications/subscriptions/acknowledged", "method") in found


def test_a_listen_stream_sends_only_what_its_revision_defines() -> None:
    sent: list[dict[str, Any]] = []
    stream = Subscription(1, {"toolsListChanged": True}, sent.append, defined=frozenset())
    stream.acknowledge()
    assert sent == []
    defined = frozenset({"notifications/subscriptions/acknowledged"})
    Subscription(1, {}, sent.append, defined=defined).acknowledge()
    assert [note["method"] for note in sent] == ["notifications/subscriptions/acknowledged"]


def test_a_task_result_is_checked_with_the_extension_that_defines_it() -> None:
    server = Server("tasks", "1.0")
    checks = AnswerChecks(server.revisions, record="")
    revision = server.revisions.of(MODERN)
    task = {
        "resultType": "task",
        "taskId": "t1",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttlMs": None,
    }
    response = {"jsonrpc": "2.0", "id": 1, "result": task}
    assert checks.response(revision, "tools/call", response) is None
    broken = {**response, "result": {**task, "status": "asleep"}}
    found = checks.response(revision, "tools/call", broken)
    assert found is not None and found.path == "result.status"
    unknown = {**response, "result": {"resultType": "made_up"}}
    found = checks.response(revision, "tools/call", unknown)
    assert found is not None and found.path == "result.resultType"
