"""The optional flow mark sealed beside the data, and the reasons a refusal keeps to itself."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from snodo.core.errors import InvalidState
from snodo.core.state.keyring import Keyring
from snodo.core.state.keys import key_set
from snodo.core.state.replay import MemoryGuard
from snodo.core.state.token import MAX_FLOW_LENGTH, inspect, seal_token
from tests.support.state_vectors import DATA, KEY_A, KEY_B, NOW, Ctx, later

MARK = "0123456789abcdef.2.0af7651916cd43dd8448eb211c80319c00f067aa0ba902b7"


@pytest.mark.parametrize("encrypted", [False, True])
def test_the_mark_comes_back_with_the_data_only_through_accept_verified(
    encrypted: bool,
) -> None:
    ring = Keyring(secret=KEY_A, encrypted=encrypted)
    token = ring.seal(DATA, Ctx(), flow=MARK)
    verified = asyncio.run(ring.accept_verified(token, Ctx()))
    assert (verified.data, verified.flow, verified.asked) == (DATA, MARK, None)
    assert ring.open(token, Ctx()) == DATA
    plain = asyncio.run(ring.accept_verified(ring.seal(DATA, Ctx()), Ctx()))
    assert (plain.data, plain.flow) == (DATA, None)
    if encrypted:
        assert "flow" not in inspect(token)
    else:
        assert inspect(token)["flow"] == MARK


def test_the_mark_sits_in_canonical_key_order_and_leaves_old_tokens_unchanged() -> None:
    ring = Keyring(secret=KEY_A)
    plain = ring.seal(DATA, Ctx())
    marked = ring.seal(DATA, Ctx(), flow=MARK)
    assert list(inspect(marked)) == ["version", "kid", "data", "exp", "flow", "iat"]
    assert list(inspect(plain)) == ["version", "kid", "data", "exp", "iat"]


@pytest.mark.parametrize(
    "flow", ["", "a b", 'q"uote', "é", "x" * (MAX_FLOW_LENGTH + 1), 7, b"bytes"]
)
def test_bad_marks_are_refused_when_sealing(flow: Any) -> None:
    with pytest.raises(ValueError):
        Keyring(secret=KEY_A).seal(DATA, Ctx(), flow=flow)


def test_a_key_holder_cannot_slip_a_bad_mark_past_verification() -> None:
    """seal_token trusts its caller; the opener still checks the mark's form."""
    keys = key_set(KEY_A, None)
    token = seal_token(keys, DATA, Ctx(), None, 300, False, False, os.urandom, "a b")
    with pytest.raises(InvalidState) as refused:
        Keyring(secret=KEY_A).open(token, Ctx())
    assert refused.value.reason == "malformed"


def reason(call: Any) -> str:
    with pytest.raises(InvalidState) as refused:
        asyncio.run(call) if asyncio.iscoroutine(call) else call()
    assert refused.value.to_error() == {"code": -32602, "message": "Invalid request state"}
    return refused.value.reason


def test_each_refusal_names_its_reason_and_says_the_same_on_the_wire() -> None:
    ring = Keyring(secret=KEY_A)
    guarded = Keyring(secret=KEY_A, guard=MemoryGuard(clock=lambda: NOW))
    token = ring.seal(DATA, Ctx())
    once = guarded.seal(DATA, Ctx())
    assert asyncio.run(guarded.accept(once, Ctx())) == DATA
    other = Ctx(request_params={"name": "book", "arguments": {"nights": 3}})
    assert reason(lambda: ring.open("v1.x.y", Ctx())) == "malformed"
    assert reason(lambda: Keyring(secret=KEY_B).open(token, Ctx())) == "forged"
    assert reason(lambda: Keyring(keys=[("b", KEY_B)]).open(token, Ctx())) == "unknown_key"
    assert reason(lambda: ring.open(token, other)) == "forged"  # misbound looks forged
    assert reason(lambda: ring.open(token, later(Ctx(), 301))) == "expired"
    assert reason(lambda: ring.open(once, Ctx())) == "one_time"
    assert reason(guarded.accept(token, Ctx())) == "reusable"
    assert reason(guarded.accept(once, Ctx())) == "replayed"
