"""snodo.core.state.keyring.Keyring: options checked once, then seal/open/open_once on it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from snodo.core import state
from snodo.core.errors import InvalidState
from snodo.core.state.keyring import SECRET_ENV, Keyring
from snodo.core.state.replay import MemoryGuard
from snodo.server import Server, State
from tests.support.state_vectors import DATA, KEY_A, KEY_B, NOW, Ctx, later


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({}, TypeError),  # neither secret nor keys
        ({"secret": KEY_A, "keys": [("a", KEY_A)]}, TypeError),
        ({"secret": b"short"}, ValueError),
        ({"secret": KEY_A.hex()}, TypeError),
        ({"keys": []}, ValueError),
        ({"keys": [("bad kid!", KEY_A)]}, ValueError),
        ({"secret": KEY_A, "ttl": 0}, ValueError),
        ({"secret": KEY_A, "ttl": 901}, ValueError),
        ({"secret": KEY_A, "ttl": True}, TypeError),
        ({"secret": KEY_A, "encrypted": "yes"}, TypeError),
        ({"secret": KEY_A, "guard": object()}, TypeError),
    ],
)
def test_bad_options_fail_when_the_keyring_is_built(options: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        Keyring(**options)


def test_a_keyring_and_the_module_functions_make_and_open_the_same_tokens() -> None:
    ring = Keyring(keys=[("new", KEY_B), ("old", KEY_A)], ttl=60)
    token = ring.seal(DATA, Ctx(), principal="alice")
    assert token.startswith("v1.new.")
    assert Keyring(keys=[("new", KEY_B)], ttl=60).open(token, Ctx(), principal="alice") == DATA
    older = Keyring(secret=KEY_A, ttl=60).seal(DATA, Ctx(), principal="alice")
    assert ring.open(older, Ctx(), principal="alice") == DATA
    for wrong in (
        lambda: ring.open(token, Ctx(), principal="bob"),
        lambda: ring.open(token, later(Ctx(), 60)),
        lambda: ring.open(token, Ctx(request_method="prompts/get"), principal="alice"),
    ):
        with pytest.raises(InvalidState):
            wrong()


def test_with_a_guard_tokens_are_one_time_and_open_only_once() -> None:
    async def main() -> None:
        ring = Keyring(secret=KEY_A, guard=MemoryGuard(clock=lambda: NOW))
        token = ring.seal(DATA, Ctx())
        assert "jti" in state.inspect(token)
        with pytest.raises(InvalidState):
            ring.open(token, Ctx())  # one-time tokens never open without the guard
        assert await ring.accept(token, Ctx()) == DATA
        with pytest.raises(InvalidState):
            await ring.open_once(token, Ctx())
        reusable = ring.seal(DATA, Ctx(), once=False)
        with pytest.raises(InvalidState):
            await ring.open_once(reusable, Ctx())  # a guarded opener takes no reusable token

    asyncio.run(main())


def test_open_once_without_any_guard_is_a_caller_error() -> None:
    ring = Keyring(secret=KEY_A)
    token = ring.seal(DATA, Ctx(), once=True)
    with pytest.raises(TypeError, match="guard"):
        asyncio.run(ring.open_once(token, Ctx()))
    assert asyncio.run(ring.open_once(token, Ctx(), guard=MemoryGuard(clock=lambda: NOW))) == DATA


def test_encrypted_keyrings_hide_the_payload_and_open_both_formats() -> None:
    hidden = Keyring(secret=KEY_A, encrypted=True)
    plain = Keyring(secret=KEY_A)
    token = hidden.seal(DATA, Ctx())
    assert state.inspect(token) == {"version": "e1", "kid": state.fingerprint(KEY_A)}
    assert plain.open(token, Ctx()) == DATA
    assert hidden.open(plain.seal(DATA, Ctx()), Ctx()) == DATA


def test_a_server_takes_a_keyring_or_the_shorthands_but_not_both() -> None:
    ring = Keyring(secret=KEY_A)
    assert Server("s", "1", state=State(keyring=ring)).keyring is ring
    built = Server("s", "1", state_secret=KEY_A).keyring  # one-time state by default
    assert built is not None and isinstance(built.guard, MemoryGuard)
    clashes: list[dict[str, Any]] = [
        {"secret": KEY_A},
        {"ttl": 60},
        {"encrypted": True},
        {"guard": False},
        {"guard": MemoryGuard()},
    ]
    for clash in clashes:
        with pytest.raises(ValueError, match=r"State\(keyring=...\) brings its own"):
            Server("s", "1", state=State(keyring=ring, **clash))


def test_a_server_without_keys_reads_the_environment_else_makes_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every server seals (the questions a flow asked need it): with the secret it is
    given, else SNODO_STATE_SECRET, else a key of its process alone."""
    monkeypatch.delenv(SECRET_ENV, raising=False)
    plain = State(guard=False)  # states opened more than once here
    alone, other = Server("s", "1", state=plain), Server("s", "1", state=plain)
    assert alone.state_per_process and other.state_per_process
    token = alone.keyring.seal(DATA, Ctx())
    assert alone.keyring.open(token, Ctx()) == DATA
    with pytest.raises(InvalidState):
        other.keyring.open(token, Ctx())  # another process's key: its own
    assert not Server("s", "1", state_secret=KEY_A).state_per_process
    monkeypatch.setenv(SECRET_ENV, KEY_A.hex())
    first, second = Server("s", "1", state=plain), Server("s", "1", state=plain)
    assert not first.state_per_process
    assert second.keyring.open(first.keyring.seal(DATA, Ctx()), Ctx()) == DATA
    assert Keyring(secret=KEY_A).open(first.keyring.seal(DATA, Ctx()), Ctx()) == DATA
    monkeypatch.setenv(SECRET_ENV, "not hex")
    with pytest.raises(ValueError, match="SNODO_STATE_SECRET must be hex"):
        Server("s", "1")
    monkeypatch.setenv(SECRET_ENV, "ab" * 8)
    with pytest.raises(ValueError):
        Server("s", "1")  # 16 bytes: too short a secret
