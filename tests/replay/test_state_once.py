"""One-time tokens in snodo.core.state: sealed with an id, opened once through a guard."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import replace
from typing import Any

import pytest

from snodo.core import state
from snodo.core.errors import InvalidState
from snodo.core.state.keyring import Keyring
from snodo.core.state.replay import MemoryGuard
from tests.support.state_vectors import DATA, KEY_A, KEY_B, NOW, Ctx, later

OPTIONS: dict[str, Any] = {"secret": KEY_A, "principal": "alice"}


class SpyGuard:
    """Records every consume and answers like a MemoryGuard (or raises, when told to)."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[tuple[str, float]] = []
        self.fail = fail
        self.inner = MemoryGuard(clock=lambda: NOW)

    async def consume(self, token_id: str, expires_at: float) -> bool:
        self.calls.append((token_id, expires_at))
        if self.fail is not None:
            raise self.fail
        return await self.inner.consume(token_id, expires_at)


def open_once(
    token: str, guard: Any, ctx: Ctx | None = None, *, principal: str = "alice", **keyring: Any
) -> Any:
    """``Keyring.open_once`` with the guard given, for KEY_A and alice unless told."""
    opener = Keyring(**({"secret": KEY_A} | keyring))
    return asyncio.run(opener.open_once(token, ctx or Ctx(), principal=principal, guard=guard))


def payload(token: str) -> dict[str, Any]:
    encoded = token.split(".")[2]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(encoded + "=="))
    return decoded


@pytest.mark.parametrize("encrypted", [False, True])
def test_a_one_time_token_opens_once(encrypted: bool) -> None:
    guard = SpyGuard()
    token = Keyring(encrypted=encrypted, secret=KEY_A).seal(
        DATA, Ctx(), once=True, principal="alice"
    )
    assert open_once(token, guard) == DATA
    with pytest.raises(InvalidState) as replayed:
        open_once(token, guard)
    assert replayed.value.to_error() == {"code": -32602, "message": "Invalid request state"}
    assert replayed.value.__cause__ is None
    assert len(guard.calls) == 2
    assert guard.calls[0] == guard.calls[1]


def test_the_id_is_128_random_bits_in_the_payload_and_unique() -> None:
    tokens = [
        Keyring(secret=KEY_A).seal(DATA, Ctx(), once=True, principal="alice") for _ in range(200)
    ]
    ids = {payload(token)["jti"] for token in tokens}
    assert len(ids) == 200
    for token_id in ids:
        assert len(token_id) == 22
        assert len(base64.urlsafe_b64decode(token_id + "==")) == 16
    first = payload(tokens[0])
    assert list(first) == ["data", "exp", "iat", "jti"]
    assert state.inspect(tokens[0])["jti"] == first["jti"]


def test_a_reusable_token_is_byte_identical_to_before() -> None:
    """once=False draws no randomness and writes no id: the documented vectors hold."""

    def no_randomness(size: int) -> bytes:
        raise AssertionError("randbytes called for a reusable token")

    token = Keyring(secret=KEY_A).seal(DATA, Ctx(), randbytes=no_randomness, principal="alice")
    assert set(payload(token)) == {"data", "exp", "iat"}


def test_the_guard_holds_the_id_until_expiry_plus_the_tolerated_skew() -> None:
    guard = SpyGuard()
    token = Keyring(ttl=120, secret=KEY_A).seal(DATA, Ctx(), once=True, principal="alice")
    open_once(token, guard, ttl=120)
    assert guard.calls == [(payload(token)["jti"], payload(token)["exp"] + state.CLOCK_SKEW)]
    assert payload(token)["exp"] == int(NOW) + 120


def test_plain_open_refuses_a_one_time_token_and_open_once_a_reusable_one() -> None:
    """Neither side fails open: a one-time token is never opened without consuming it."""
    guard = SpyGuard()
    once = Keyring(secret=KEY_A).seal(DATA, Ctx(), once=True, principal="alice")
    reusable = Keyring(secret=KEY_A).seal(DATA, Ctx(), principal="alice")
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open(once, Ctx(), principal="alice")
    with pytest.raises(InvalidState):
        open_once(reusable, guard)
    assert guard.calls == []
    assert Keyring(secret=KEY_A).open(reusable, Ctx(), principal="alice") == DATA
    assert open_once(once, guard) == DATA


def test_invalid_tokens_never_reach_the_guard() -> None:
    guard = SpyGuard()
    token = Keyring(secret=KEY_A).seal(DATA, Ctx(), once=True, principal="alice")
    head, mac = token.rsplit(".", 1)
    attempts: list[tuple[str, Ctx, dict[str, Any]]] = [
        (token, later(Ctx(), 300), {}),
        (token, Ctx(request_method="prompts/get"), {}),
        (token, Ctx(), {"principal": "bob"}),
        (token, Ctx(), {"secret": KEY_B}),
        (f"{head}.{mac[::-1]}", Ctx(), {}),
        ("v1.x.y.z", Ctx(), {}),
    ]
    for bad, ctx, options in attempts:
        with pytest.raises(InvalidState):
            open_once(bad, guard, ctx, **options)
    assert guard.calls == []
    assert open_once(token, guard) == DATA, "failed attempts did not spend the token"


def test_a_failing_store_raises_its_own_error_not_invalid_state() -> None:
    token = Keyring(secret=KEY_A).seal(DATA, Ctx(), once=True, principal="alice")
    with pytest.raises(ConnectionError):
        open_once(token, SpyGuard(fail=ConnectionError("store down")))
    assert open_once(token, SpyGuard()) == DATA


@pytest.mark.parametrize("randbytes", [lambda n: b"\0" * (n - 1), lambda n: "x" * n])
def test_a_bad_randomness_source_is_refused(randbytes: Any) -> None:
    with pytest.raises(ValueError, match="randbytes"):
        Keyring(secret=KEY_A).seal(DATA, Ctx(), once=True, randbytes=randbytes, principal="alice")


def test_option_errors_come_before_the_token() -> None:
    with pytest.raises(TypeError):
        open_once("v1.a.e30.x", SpyGuard(), secret=None)
    with pytest.raises(TypeError):
        Keyring(secret=KEY_A).seal(DATA, Ctx(), once="yes", principal="alice")  # type: ignore[arg-type]


def test_rotation_and_binding_work_for_one_time_tokens() -> None:
    guard = SpyGuard()
    token = Keyring(keys=[("b", KEY_B), ("a", KEY_A)]).seal(DATA, Ctx(), once=True, principal="p")
    retry = replace(Ctx(), request_params={**Ctx().request_params, "requestState": token})
    ring = [("a", KEY_A), ("b", KEY_B)]
    assert open_once(token, guard, retry, secret=None, keys=ring, principal="p") == DATA
