"""Through the server: with a guard, an echoed requestState is consumed before the handler.

A replayed retry gets -32602 "Invalid request state" and the handler does not run.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from snodo.core import state
from snodo.core.context import Context
from snodo.core.result import input_required
from snodo.core.state.replay import MemoryGuard, ReplayGuard
from snodo.server import Server, State
from snodo.stores import RedisGuard, SQLiteGuard
from tests.support.wire import answer, request

SECRET = bytes(range(32))
INVALID = {"code": -32602, "message": "Invalid request state"}


def build(guard: ReplayGuard | bool, **state: Any) -> tuple[Server, list[int]]:
    """A server whose ``redeem`` tool asks for one confirmation round, counting its runs."""
    sealing = State(clock=time.time, secret=SECRET, guard=guard, **state)
    server = Server("test-server", "1.0.0", state=sealing)
    runs: list[int] = []

    @server.tool
    def redeem(ctx: Context, code: str) -> Any:
        runs.append(1)
        if ctx.state_data is None:
            return input_required(request_state=ctx.seal({"code": code, "round": 1}))
        if ctx.state_data["round"] == 1 and code == "TWO-ROUNDS":
            return input_required(request_state=ctx.seal({"code": code, "round": 2}))
        return f"redeemed {ctx.state_data['code']} after round {ctx.state_data['round']}"

    return server, runs


def call(code: str, id: int, **params: Any) -> dict[str, Any]:
    return request("tools/call", {"name": "redeem", "arguments": {"code": code}, **params}, id=id)


def text(response: dict[str, Any]) -> str:
    content: str = response["result"]["content"][0]["text"]
    return content


def flow(server: Server, runs: list[int]) -> None:
    first = answer(server, call("GIFT-42", 1))
    token = first["result"]["requestState"]
    assert first["result"]["resultType"] == "input_required"
    retry = call("GIFT-42", 2, requestState=token)
    done = answer(server, retry)
    assert text(done) == "redeemed GIFT-42 after round 1"
    assert len(runs) == 2
    replayed = answer(server, {**retry, "id": 3})
    assert replayed == {"jsonrpc": "2.0", "id": 3, "error": INVALID}
    assert len(runs) == 2, "the handler did not run for the replay"


def test_replaying_a_request_state_with_the_default_memory_guard() -> None:
    flow(*build(True))


def test_replaying_a_request_state_with_an_sqlite_guard(tmp_path: Path) -> None:
    guard = SQLiteGuard(tmp_path / "ids.sqlite3")
    flow(*build(guard))
    guard.close()


def test_replaying_a_request_state_with_a_redis_guard(redis_url: str) -> None:
    async def main() -> None:
        guard = RedisGuard(redis_url)
        server, runs = build(guard)
        first = await server.handle(call("GIFT-42", 1))
        assert first.response is not None
        retry = call("GIFT-42", 2, requestState=first.response["result"]["requestState"])
        done = await server.handle(retry)
        assert done.response is not None
        assert text(done.response) == "redeemed GIFT-42 after round 1"
        replayed = await server.handle({**retry, "id": 3})
        assert replayed.response == {"jsonrpc": "2.0", "id": 3, "error": INVALID}
        assert len(runs) == 2
        await guard.aclose()

    asyncio.run(main())


def test_replay_across_two_servers_sharing_a_store(tmp_path: Path) -> None:
    """Two nodes behind a load balancer: a state consumed on one is refused on the other."""
    path = tmp_path / "ids.sqlite3"
    one, two = SQLiteGuard(path), SQLiteGuard(path)
    (server_one, runs_one), (server_two, runs_two) = build(one), build(two)
    token = answer(server_one, call("GIFT-42", 1))["result"]["requestState"]
    retry = call("GIFT-42", 2, requestState=token)
    assert text(answer(server_two, retry)) == "redeemed GIFT-42 after round 1"
    assert answer(server_one, {**retry, "id": 3})["error"] == INVALID
    assert (len(runs_one), len(runs_two)) == (1, 1)
    one.close()
    two.close()


def test_each_round_gets_a_fresh_one_time_state() -> None:
    server, runs = build(True)
    first = answer(server, call("TWO-ROUNDS", 1))["result"]["requestState"]
    second = answer(server, call("TWO-ROUNDS", 2, requestState=first))["result"]["requestState"]
    assert second != first
    assert answer(server, call("TWO-ROUNDS", 3, requestState=first))["error"] == INVALID
    done = answer(server, call("TWO-ROUNDS", 4, requestState=second))
    assert text(done) == "redeemed TWO-ROUNDS after round 2"
    assert answer(server, call("TWO-ROUNDS", 5, requestState=second))["error"] == INVALID
    assert len(runs) == 3


def test_guarded_and_unguarded_servers_refuse_each_others_states() -> None:
    guarded, guarded_runs = build(True)
    plain, plain_runs = build(False)
    from_guarded = answer(guarded, call("GIFT-42", 1))["result"]["requestState"]
    from_plain = answer(plain, call("GIFT-42", 1))["result"]["requestState"]
    assert answer(plain, call("GIFT-42", 2, requestState=from_guarded))["error"] == INVALID
    assert answer(guarded, call("GIFT-42", 2, requestState=from_plain))["error"] == INVALID
    assert (len(guarded_runs), len(plain_runs)) == (1, 1)
    for _ in range(2):  # unguarded: the same state opens again (what the guard is for)
        retry = call("GIFT-42", 3, requestState=from_plain)
        assert text(answer(plain, retry)) == "redeemed GIFT-42 after round 1"


def test_a_failing_store_is_an_internal_error_and_the_handler_does_not_run() -> None:
    class DownGuard:
        async def consume(self, token_id: str, expires_at: float) -> bool:
            raise ConnectionError("store unreachable")

    server, runs = build(DownGuard())
    token = answer(server, call("GIFT-42", 1))["result"]["requestState"]
    failed = answer(server, call("GIFT-42", 2, requestState=token))
    assert failed["error"]["code"] == -32603
    assert len(runs) == 1


def test_encrypted_one_time_states_through_the_server() -> None:
    server, runs = build(MemoryGuard(), encrypted=True)
    token = answer(server, call("GIFT-42", 1))["result"]["requestState"]
    assert token.startswith("e1.")
    assert "GIFT" not in token
    assert state.inspect(token) == {"version": "e1", "kid": state.fingerprint(SECRET)}
    retry = call("GIFT-42", 2, requestState=token)
    assert text(answer(server, retry)) == "redeemed GIFT-42 after round 1"
    assert answer(server, {**retry, "id": 3})["error"] == INVALID
    assert len(runs) == 2


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"secret": SECRET, "guard": object()}, TypeError),
        ({"secret": SECRET, "encrypted": "yes"}, TypeError),
    ],
)
def test_state_options_are_checked_at_start_up(options: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        Server("s", "1", state=State(**options))


def test_a_guard_without_a_secret_guards_the_servers_own_key() -> None:
    """A server given no secret seals with a key of its process (or SNODO_STATE_SECRET):
    its guard (there by default) or encryption applies to that key as to a given one."""
    guarded = Server("s", "1")
    assert isinstance(guarded.keyring.guard, MemoryGuard)
    assert Server("s", "1", state=State(guard=False)).keyring.guard is None
    assert Server("s", "1", state=State(encrypted=True)).keyring.encrypted
