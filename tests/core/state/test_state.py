"""snodo.core.state: literal vectors shared with the docs, binding, expiry, keys and rotation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import pytest

from snodo.core import state
from snodo.core.context import Context
from snodo.core.errors import InvalidState
from snodo.core.state import token as state_token
from snodo.core.state.keyring import Keyring
from tests.support.state_vectors import (
    DATA,
    KEY_A,
    KEY_B,
    KEY_C,
    NOW,
    OTHER_REQUESTS,
    PARAMS,
    SIGNED_VECTORS,
    UNBOUND,
    Ctx,
    b64,
    canonical,
    doc_vectors,
    later,
    vector_ctx,
    vector_options,
    with_args,
)


def reference_binding(method: str, principal: str | None, params: Mapping[str, Any]) -> str:
    salient = {
        k: v for k, v in params.items() if k not in UNBOUND and not (k == "arguments" and v == {})
    }
    text = canonical([method, principal, salient])
    return b64(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())


def forge(
    payload_text: str,
    key: bytes,
    kid: str,
    ctx: Ctx,
    principal: str | None = None,
) -> str:
    """A token made with the real key around an arbitrary payload: checks after the MAC."""
    signed = f"v1.{kid}.{b64(payload_text.encode('utf-8', 'surrogatepass'))}"
    binding = reference_binding(ctx.request_method, principal, ctx.request_params)
    return f"{signed}.{b64(hmac.digest(key, f'{signed}.{binding}'.encode(), 'sha256'))}"


# --- literal vectors ---------------------------------------------------------------------


def test_docs_hold_vectors_for_both_key_modes_and_all_principal_kinds() -> None:
    vectors = doc_vectors(SIGNED_VECTORS)
    assert len(vectors) >= 3
    assert {"secret" in v for v in vectors} == {True, False}
    assert {None, "", "alice"} <= {v["principal"] for v in vectors}


@pytest.mark.parametrize("vector", doc_vectors(SIGNED_VECTORS), ids=lambda v: v["name"])
def test_vector_seals_to_the_documented_token(vector: dict[str, Any]) -> None:
    keyring = Keyring(ttl=vector["ttl"], **vector_options(vector))
    token = keyring.seal(vector["data"], vector_ctx(vector), principal=vector["principal"])
    assert token == vector["expect"]["token"]


@pytest.mark.parametrize("vector", doc_vectors(SIGNED_VECTORS), ids=lambda v: v["name"])
def test_vector_follows_the_documented_rules(vector: dict[str, Any]) -> None:
    """Re-derive every vector with plain hashlib/hmac, step by step as the doc says."""
    expect = vector["expect"]
    if "secret" in vector:
        key = bytes.fromhex(vector["secret"])
        kid = b64(hmac.digest(key, b"snodo/state/kid", "sha256")[:9])
        assert kid == state.fingerprint(key)
    else:
        kid, key_hex = vector["keys"][0]
        key = bytes.fromhex(key_hex)
    issued = math.floor(vector["clock"])
    payload = canonical({"data": vector["data"], "exp": issued + vector["ttl"], "iat": issued})
    salient = {k: v for k, v in vector["params"].items() if k not in UNBOUND}
    binding = canonical([vector["method"], vector["principal"], salient])
    digest = b64(hashlib.sha256(binding.encode()).digest())
    signed = f"v1.{kid}.{b64(payload.encode())}"
    mac = b64(hmac.digest(key, f"{signed}.{digest}".encode(), "sha256"))
    assert (kid, payload, binding, digest) == (
        expect["kid"],
        expect["payload"],
        expect["binding"],
        expect["binding_digest"],
    )
    assert f"{signed}.{mac}" == expect["token"]


@pytest.mark.parametrize("vector", doc_vectors(SIGNED_VECTORS), ids=lambda v: v["name"])
def test_vector_opens_until_it_expires(vector: dict[str, Any]) -> None:
    ctx = vector_ctx(vector)
    keyring, principal = Keyring(ttl=vector["ttl"], **vector_options(vector)), vector["principal"]
    token = vector["expect"]["token"]
    assert keyring.open(token, ctx, principal=principal) == vector["data"]
    expires = math.floor(vector["clock"]) + vector["ttl"]
    just_before = replace(ctx, now=expires - 0.001)
    assert keyring.open(token, just_before, principal=principal) == vector["data"]
    with pytest.raises(InvalidState):
        keyring.open(token, replace(ctx, now=expires), principal=principal)


def test_inspect_reads_the_fields_without_a_key() -> None:
    vector = doc_vectors(SIGNED_VECTORS)[1]
    seen = state.inspect(vector["expect"]["token"])
    issued = math.floor(vector["clock"])
    assert seen == {
        "version": "v1",
        "kid": vector["expect"]["kid"],
        "data": vector["data"],
        "iat": issued,
        "exp": issued + vector["ttl"],
    }
    for bad in ["", "v1.a.b", "v2.a.e30.x", "v1.a.!!!.x", "v1.a.WzFd.x", "x" * 9000]:
        with pytest.raises(ValueError):
            state.inspect(bad)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (0.0001, "0.0001"),
        (1e-05, "1e-05"),
        (1.5e300, "1.5e+300"),
        (-0.0, "-0.0"),
        (5e-324, "5e-324"),
        (1, "1"),
        (True, "true"),
        ('\x7f\u2028/\x1f\x08"\\', '"\x7f\u2028/\\u001f\\b\\"\\\\"'),
    ],
)
def test_canonical_scalars_match_the_documented_rules(value: Any, text: str) -> None:
    token = Keyring(secret=KEY_A).seal(value, Ctx())
    assert state.inspect(token)["data"] == value
    payload = base64.urlsafe_b64decode(token.split(".")[2] + "==").decode()
    assert payload.startswith(f'{{"data":{text},"exp":')


# --- round trips and the binding ---------------------------------------------------------


def test_round_trip_with_the_real_context() -> None:
    ctx = Context(
        request_id=7,
        request_method="tools/call",
        request_params=PARAMS,
        protocol_version="2026-07-28",
        client_capabilities={},
        principal="alice",
        clock=lambda: NOW,
    )
    typed: state.StateContext = ctx
    token = Keyring(secret=KEY_A).seal(DATA, typed, principal=ctx.principal)
    retry = replace(ctx, request_id=8, request_params={**PARAMS, "requestState": token})
    assert Keyring(secret=KEY_A).open(token, retry, principal=retry.principal) == DATA


@pytest.mark.parametrize(
    "data",
    [None, True, 0, -5, 2**70, 1.5, "", "é 🐙", [], {}, [1, [2, [3]]], {"a": {"b": [None]}}],
)
def test_any_json_value_round_trips(data: Any) -> None:
    token = Keyring(secret=KEY_A).seal(data, Ctx())
    opened = Keyring(secret=KEY_A).open(token, Ctx())
    assert opened == data
    assert type(opened) is type(data)


def test_the_expected_error_is_the_only_one() -> None:
    err = InvalidState()
    assert err.code == -32602
    assert err.to_error() == {"code": -32602, "message": "Invalid request state"}


RETRY_ONLY_CHANGES: list[Mapping[str, Any]] = [
    {**PARAMS, "_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "x": 1}},
    {k: v for k, v in PARAMS.items() if k != "_meta"},
    {**PARAMS, "inputResponses": {"q": {"action": "accept", "content": {"a": 1}}}},
    {**PARAMS, "requestState": "anything"},
    dict(reversed(list(PARAMS.items()))),
    {
        **PARAMS,
        "arguments": {"detail": {"n": 1, "wind": True}, "days": [1, 2], "location": "New York"},
    },
]


@pytest.mark.parametrize("params", RETRY_ONLY_CHANGES)
def test_retry_fields_and_key_order_are_not_bound(params: Mapping[str, Any]) -> None:
    token = Keyring(secret=KEY_A).seal(DATA, Ctx(), principal="alice")
    assert Keyring(secret=KEY_A).open(token, Ctx(request_params=params), principal="alice") == DATA


def _failures(token: str) -> dict[str, Callable[[], Any]]:
    """Every way to present ``token`` (sealed for Ctx(), KEY_A, alice) that must fail."""
    ring = Keyring(secret=KEY_A)

    def present(presented: Any, ctx: Ctx | None = None) -> Callable[[], Any]:
        return lambda: ring.open(presented, Ctx() if ctx is None else ctx, principal="alice")

    cases = {name: present(token, ctx) for name, ctx in OTHER_REQUESTS.items()}
    head, mac = token.rsplit(".", 1)
    version, kid, payload = head.split(".")
    flipped = "A" if payload[5] != "A" else "B"
    cases |= {
        "other principal": lambda: ring.open(token, Ctx(), principal="bob"),
        "anonymous": lambda: ring.open(token, Ctx()),
        "empty principal": lambda: ring.open(token, Ctx(), principal=""),
        "other key": lambda: Keyring(secret=KEY_B).open(token, Ctx(), principal="alice"),
        "keyring without the key": lambda: Keyring(keys=[("b", KEY_B)]).open(
            token, Ctx(), principal="alice"
        ),
        "expired": present(token, later(Ctx(), 300)),
        "long expired": present(token, later(Ctx(), 10**6)),
        "opener allows a shorter life": lambda: Keyring(secret=KEY_A, ttl=299).open(
            token, Ctx(), principal="alice"
        ),
        "issued too far in the future": present(token, later(Ctx(), -61.5)),
        "NaN clock": present(token, later(Ctx(), math.nan)),
        "payload tampered": present(f"{version}.{kid}.{payload[:5]}{flipped}{payload[6:]}.{mac}"),
        "mac tampered": present(f"{head}.{mac[::-1]}"),
        "kid swapped": present(f"v1.other.{payload}.{mac}"),
        "bad kid": present(f"v1.a!b.{payload}.{mac}"),
        "other version": present(f"v2.{kid}.{payload}.{mac}"),
        "three parts": present(f"{version}.{payload}.{mac}"),
        "five parts": present(f"{token}.x"),
        "empty": present(""),
        "not a string": present(123),
        "non-ascii": present(token[:-1] + "é"),
        "oversized": present(token + "A" * state.MAX_TOKEN_LENGTH),
    }
    return cases


def test_every_failure_is_the_same_invalid_state() -> None:
    token = Keyring(secret=KEY_A).seal(DATA, Ctx(), principal="alice")
    assert Keyring(secret=KEY_A).open(token, later(Ctx(), 299.49), principal="alice") == DATA
    assert Keyring(secret=KEY_A).open(token, later(Ctx(), -60.5), principal="alice") == DATA
    seen = set()
    for name, attempt in _failures(token).items():
        with pytest.raises(InvalidState) as caught:
            attempt()
        error = caught.value
        assert type(error) is InvalidState, name
        seen.add((str(error), error.message, repr(error.data), error.__cause__ is None))
    assert seen == {("Invalid request state", "Invalid request state", "None", True)}


def test_principal_none_differs_from_every_string() -> None:
    for sealed_for, opened_for in [(None, ""), ("", None), (None, "null"), ("null", None)]:
        token = Keyring(secret=KEY_A).seal(DATA, Ctx(), principal=sealed_for)
        assert Keyring(secret=KEY_A).open(token, Ctx(), principal=sealed_for) == DATA
        with pytest.raises(InvalidState):
            Keyring(secret=KEY_A).open(token, Ctx(), principal=opened_for)


@pytest.mark.parametrize(
    "payload",
    [
        '{"data":1,"exp":1800000300,"iat":1800000000,"more":1}',
        '{"data":1,"exp":1800000300}',
        '{"data":1,"exp":1800000300.0,"iat":1800000000}',
        '{"data":1,"exp":true,"iat":1800000000}',
        '{"data":1,"exp":1800000000,"iat":1800000000}',
        '{"data":1,"exp":1800000301,"iat":1800000000}',
        '{"data":NaN,"exp":1800000300,"iat":1800000000}',
        '{"data":1e400,"exp":1800000300,"iat":1800000000}',
        '{"data":[-1E+309],"exp":1800000300,"iat":1800000000}',
        '{"data":1,"exp":1800000300,"iat":1800000000',
        '[{"data":1,"exp":1800000300,"iat":1800000000}]',
        '"\ud800"',
        '{"data":' + "[" * 33 + "]" * 33 + ',"exp":1800000300,"iat":1800000000}',
        '{"data":' + "[" * 5000 + "]" * 5000 + ',"exp":1800000300,"iat":1800000000}',
    ],
)
def test_authentic_but_malformed_payloads_are_refused(payload: str) -> None:
    token = forge(payload, KEY_A, "k", Ctx())
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open(token, Ctx())


def test_the_forge_helper_makes_tokens_that_open() -> None:
    deep = "[" * 32 + "]" * 32
    payload = f'{{"data":{deep},"exp":1800000300,"iat":1800000000}}'
    assert Keyring(secret=KEY_A).open(forge(payload, KEY_A, "k", Ctx()), Ctx()) == json.loads(deep)
    brackets_in_strings = '{"data":"' + "[" * 100 + '","exp":1800000300,"iat":1800000000}'
    assert Keyring(secret=KEY_A).open(forge(brackets_in_strings, KEY_A, "k", Ctx()), Ctx())


def test_oversized_tokens_are_refused_before_any_crypto(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_crypto(*_: object) -> str:
        raise AssertionError("MAC computed for an oversized token")

    monkeypatch.setattr(state_token, "_mac", no_crypto)
    monkeypatch.setattr(state_token, "_binding", no_crypto)
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open("v1.k." + "A" * state.MAX_TOKEN_LENGTH + ".x", Ctx())


# --- seal-side limits and options ----------------------------------------------------


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def test_data_limits() -> None:
    deepest = _nested(state.MAX_DATA_DEPTH)
    assert Keyring(secret=KEY_A).open(Keyring(secret=KEY_A).seal(deepest, Ctx()), Ctx()) == deepest
    with pytest.raises(ValueError, match="deeper"):
        Keyring(secret=KEY_A).seal(_nested(state.MAX_DATA_DEPTH + 1), Ctx())
    with pytest.raises(ValueError, match="deeper"):
        Keyring(secret=KEY_A).seal(_nested(5000), Ctx())
    big = Keyring(secret=KEY_A).seal("x" * 6000, Ctx())
    assert len(big) <= state.MAX_TOKEN_LENGTH
    with pytest.raises(ValueError, match="exceeds"):
        Keyring(secret=KEY_A).seal("x" * 6200, Ctx())


class _Int(int):
    pass


@pytest.mark.parametrize(
    "data",
    [
        math.nan,
        math.inf,
        [-math.inf],
        (1, 2),
        {1, 2},
        {1: "a"},
        {"a": {None: 1}},
        b"raw",
        _Int(3),
        "\ud800",
        object(),
    ],
    # An object's repr holds its address, different in each process: parallel workers
    # must collect the same ids.
    ids=lambda value: "object()" if type(value) is object else repr(value),
)
def test_seal_refuses_what_is_not_exactly_json(data: Any) -> None:
    with pytest.raises(ValueError):
        Keyring(secret=KEY_A).seal(data, Ctx())


def test_seal_refuses_params_it_cannot_bind() -> None:
    with pytest.raises(ValueError, match="params"):
        Keyring(secret=KEY_A).seal(DATA, Ctx(request_params=with_args(days=[math.inf])))


def test_params_with_lone_surrogates_still_bind() -> None:
    ctx = Ctx(request_params=with_args(location="\ud800"))
    token = Keyring(secret=KEY_A).seal(DATA, ctx)
    assert Keyring(secret=KEY_A).open(token, ctx) == DATA
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open(token, Ctx(request_params=with_args(location="\ud801")))


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({}, TypeError),
        ({"secret": KEY_A, "keys": [("a", KEY_A)]}, TypeError),
        ({"secret": KEY_A.hex()}, TypeError),
        ({"secret": bytearray(KEY_A)}, TypeError),
        ({"secret": KEY_A[:31]}, ValueError),
        ({"keys": []}, ValueError),
        ({"keys": [(f"k{i}", KEY_A) for i in range(9)]}, ValueError),
        ({"keys": [("a", KEY_A), ("a", KEY_B)]}, ValueError),
        ({"keys": [("", KEY_A)]}, ValueError),
        ({"keys": [("a" * 33, KEY_A)]}, ValueError),
        ({"keys": [("a.b", KEY_A)]}, ValueError),
        ({"keys": [("é", KEY_A)]}, ValueError),
        ({"keys": [(" a", KEY_A)]}, ValueError),
        ({"keys": [(1, KEY_A)]}, TypeError),
        ({"keys": [("a", KEY_A[:16])]}, ValueError),
        ({"keys": [("a", "x" * 40)]}, TypeError),
        ({"keys": [("a", KEY_A, "extra")]}, TypeError),
        ({"keys": ["a"]}, TypeError),
        ({"keys": {"a": KEY_A}}, TypeError),
        ({"keys": [("a", KEY_A), (state.fingerprint(KEY_A), KEY_B)]}, ValueError),
        ({"secret": KEY_A, "ttl": 0}, ValueError),
        ({"secret": KEY_A, "ttl": -1}, ValueError),
        ({"secret": KEY_A, "ttl": 901}, ValueError),
        ({"secret": KEY_A, "ttl": math.nan}, ValueError),
        ({"secret": KEY_A, "ttl": True}, TypeError),
        ({"secret": KEY_A, "ttl": "300"}, TypeError),
    ],
)
def test_invalid_options_raise_when_the_keyring_is_made(
    options: dict[str, Any], error: type
) -> None:
    with pytest.raises(error):
        Keyring(**options)


@pytest.mark.parametrize("principal", [7, b"alice", ["alice"]])
def test_a_principal_that_is_not_a_string_raises_at_seal_and_open(principal: Any) -> None:
    keyring = Keyring(secret=KEY_A)
    with pytest.raises(TypeError):
        keyring.seal(DATA, Ctx(), principal=principal)
    with pytest.raises(TypeError):
        keyring.open("v1.a.e30.x", Ctx(), principal=principal)


def test_valid_option_edges() -> None:
    ring = [("k" * 32, KEY_A), *((f"k{i}", bytes([i]) * 32) for i in range(7))]
    Keyring(keys=ring, ttl=900).seal(1, Ctx(), principal="")
    Keyring(secret=KEY_A)
    assert Keyring(keys=ring).open(Keyring(keys=ring).seal(1, Ctx()), Ctx()) == 1
    as_lists = [["a-_Z9", KEY_A]]  # unhashable, so the uncached path
    assert Keyring(keys=as_lists).open(Keyring(keys=as_lists).seal(1, Ctx()), Ctx()) == 1  # type: ignore[arg-type]
    same_secret_twice = [("a", KEY_A), ("b", KEY_A)]
    assert Keyring(secret=KEY_A).open(Keyring(keys=same_secret_twice).seal(1, Ctx()), Ctx()) == 1
    for own_fingerprint in (
        [(state.fingerprint(KEY_A), KEY_A)],
        [("b", KEY_A), (state.fingerprint(KEY_A), KEY_A)],
        [(state.fingerprint(KEY_A), KEY_A), ("b", KEY_A)],
    ):
        token = Keyring(keys=own_fingerprint).seal(1, Ctx())
        assert Keyring(secret=KEY_A).open(token, Ctx()) == 1
        assert Keyring(keys=own_fingerprint).open(Keyring(secret=KEY_A).seal(1, Ctx()), Ctx()) == 1
    for ttl in (0.5, 900, 899.5):
        token = Keyring(secret=KEY_A, ttl=ttl).seal(1, Ctx())
        assert Keyring(secret=KEY_A, ttl=ttl).open(token, Ctx()) == 1
        assert state.inspect(token)["exp"] - state.inspect(token)["iat"] == math.ceil(ttl)


def test_a_longer_ttl_opens_only_where_allowed() -> None:
    token = Keyring(secret=KEY_A, ttl=900).seal(DATA, Ctx())
    assert Keyring(secret=KEY_A, ttl=900).open(token, later(Ctx(), 899)) == DATA
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open(token, Ctx())


# --- keys: secret/keyring interop and rotation ------------------------------------------


def test_secret_sealed_tokens_open_with_any_keyring_holding_the_secret() -> None:
    token = Keyring(secret=KEY_A).seal(DATA, Ctx())
    assert state.inspect(token)["kid"] == state.fingerprint(KEY_A)
    for ring in ([("a", KEY_A)], [("b", KEY_B), ("whatever", KEY_A)], [("c", KEY_C), ("a", KEY_A)]):
        assert Keyring(keys=ring).open(token, Ctx()) == DATA
    with pytest.raises(InvalidState):
        Keyring(keys=[("b", KEY_B), ("c", KEY_C)]).open(token, Ctx())


def test_keyring_sealed_tokens_open_with_the_secret_they_name() -> None:
    token = Keyring(keys=[("a", KEY_A), ("b", KEY_B)]).seal(DATA, Ctx())
    assert state.inspect(token)["kid"] == "a"
    assert Keyring(secret=KEY_A).open(token, Ctx()) == DATA
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_B).open(token, Ctx())
    with pytest.raises(InvalidState):  # renaming the kid breaks the MAC, same secret or not
        Keyring(keys=[("z", KEY_A)]).open(token.replace("v1.a.", "v1.z."), Ctx())


class Node:
    """One server behind the load balancer, with its current keyring."""

    def __init__(self, keys: list[tuple[str, bytes]] | None = None, secret: bytes | None = None):
        self.keys = keys
        self.secret = secret

    def seal(self, data: Any) -> str:
        return Keyring(keys=self.keys, secret=self.secret).seal(data, Ctx(), principal="p")

    def open(self, token: str, ctx: Ctx | None = None) -> Any:
        return Keyring(keys=self.keys, secret=self.secret).open(token, ctx or Ctx(), principal="p")


def _exchange(one: Node, two: Node) -> int:
    """Tokens each node seals, opened by both; returns how many were rejected."""
    rejected = 0
    for sealer in (one, two):
        token = sealer.seal({"from": id(sealer)})
        for opener in (one, two):
            try:
                assert opener.open(token) == {"from": id(sealer)}
            except InvalidState:
                rejected += 1
    return rejected


def test_three_step_rotation_across_two_nodes_rejects_nothing_until_the_end() -> None:
    a, b = ("a", KEY_A), ("b", KEY_B)
    steps: list[list[tuple[str, bytes]]] = [[a], [a, b], [b, a], [b]]
    one, two = Node(steps[0]), Node(steps[0])
    in_flight = one.seal("sealed before rotation")
    for step in steps[1:]:
        if step == steps[-1]:
            # Step 3 only after the longest lifetime: what `a` sealed has expired by now.
            with pytest.raises(InvalidState):
                two.open(in_flight, later(Ctx(), state.DEFAULT_TTL))
        one.keys = step  # one node is rolled out, the other is not yet
        assert _exchange(one, two) == 0
        two.keys = step
        assert _exchange(one, two) == 0
    retired = Node([a]).seal("sealed with the retired key")
    for node in (one, two):
        with pytest.raises(InvalidState):
            node.open(retired)
        with pytest.raises(InvalidState):
            node.open(Node(secret=KEY_A).seal("retired key in secret mode"))


def test_moving_from_secret_to_keyring_needs_no_coordinated_switch() -> None:
    one, two = Node(secret=KEY_A), Node(secret=KEY_A)
    for step in ([("a", KEY_A)], [("a", KEY_A), ("b", KEY_B)]):
        one.secret, one.keys = None, step
        assert _exchange(one, two) == 0
    two.secret, two.keys = None, [("a", KEY_A), ("b", KEY_B)]
    assert _exchange(one, two) == 0


@pytest.mark.parametrize("kid", ["", "a!b", "k" * 33, "a b"])
def test_secret_mode_refuses_an_ill_formed_kid_even_under_a_good_mac(kid: str) -> None:
    payload = '{"data":1,"exp":1800000300,"iat":1800000000}'
    assert Keyring(secret=KEY_A).open(forge(payload, KEY_A, "k" * 32, Ctx()), Ctx()) == 1
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open(forge(payload, KEY_A, kid, Ctx()), Ctx())


def test_empty_arguments_bind_like_absent_ones() -> None:
    bare = Ctx(request_params={"name": "t"})
    empty = Ctx(request_params={"name": "t", "arguments": {}})
    token = Keyring(secret=KEY_A).seal({"x": 1}, bare)
    assert Keyring(secret=KEY_A).open(token, empty) == {"x": 1}
    assert Keyring(secret=KEY_A).open(Keyring(secret=KEY_A).seal(2, empty), bare) == 2
    other = Ctx(request_params={"name": "t", "arguments": {"a": None}})
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open(token, other)
