"""Encrypted state (e1): the documented vectors, secrecy, the same binding, keys and error."""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import hmac
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from hypothesis import given, settings
from hypothesis import strategies as st

from snodo.core import state
from snodo.core.errors import InvalidState
from snodo.core.state import keys as state_keys
from snodo.core.state.keyring import Keyring
from snodo.core.state.replay import MemoryGuard
from tests.support.state_vectors import (
    DATA,
    KEY_A,
    KEY_B,
    KEY_C,
    ONCE_AND_ENCRYPTED_VECTORS,
    OTHER_REQUESTS,
    UNBOUND,
    Ctx,
    b64,
    canonical,
    doc_vectors,
    later,
    vector_ctx,
    vector_options,
)

OPTIONS: dict[str, Any] = {"secret": KEY_A, "principal": "alice"}


def replay_bytes(hex_stream: str) -> tuple[Callable[[int], bytes], bytearray]:
    """A randbytes that hands out the vector's bytes in order; the rest shows what is left."""
    rest = bytearray(bytes.fromhex(hex_stream))

    def take(size: int) -> bytes:
        out = bytes(rest[:size])
        del rest[:size]
        return out

    return take, rest


def hkdf_sha256(secret: bytes, info: bytes) -> bytes:
    """RFC 5869 with an empty salt and one 32-byte block, as the doc states it."""
    prk = hmac.digest(bytes(32), secret, "sha256")
    return hmac.digest(prk, info + b"\x01", "sha256")


def vector_seal(vector: Mapping[str, Any]) -> str:
    take, rest = replay_bytes(vector["random"])
    keyring = Keyring(ttl=vector["ttl"], encrypted=vector["encrypted"], **vector_options(vector))
    token = keyring.seal(
        vector["data"],
        vector_ctx(vector),
        principal=vector["principal"],
        once=vector["once"],
        randbytes=take,
    )
    assert not rest, "seal drew exactly the documented bytes"
    return token


def test_docs_hold_one_time_and_encrypted_vectors() -> None:
    vectors = doc_vectors(ONCE_AND_ENCRYPTED_VECTORS)
    kinds = {(v["once"], v["encrypted"]) for v in vectors}
    assert {(True, False), (False, True), (True, True)} <= kinds
    assert {"secret" in v for v in vectors} == {True, False}


@pytest.mark.parametrize("vector", doc_vectors(ONCE_AND_ENCRYPTED_VECTORS), ids=lambda v: v["name"])
def test_vector_seals_to_the_documented_token(vector: dict[str, Any]) -> None:
    assert vector_seal(vector) == vector["expect"]["token"]


@pytest.mark.parametrize("vector", doc_vectors(ONCE_AND_ENCRYPTED_VECTORS), ids=lambda v: v["name"])
def test_vector_follows_the_documented_rules(vector: dict[str, Any]) -> None:
    """Re-derive with hashlib/hmac and cryptography's AESGCM alone, as the doc says."""
    expect = vector["expect"]
    if "secret" in vector:
        secret = bytes.fromhex(vector["secret"])
        kid = b64(hmac.digest(secret, b"snodo/state/kid", "sha256")[:9])
    else:
        kid, secret_hex = vector["keys"][0]
        secret = bytes.fromhex(secret_hex)
    random = bytes.fromhex(vector["random"])
    issued = math.floor(vector["clock"])
    fields = {"data": vector["data"], "exp": issued + vector["ttl"], "iat": issued}
    if vector["once"]:
        fields["jti"] = b64(random[:16])
        random = random[16:]
    payload = canonical(fields)
    salient = {k: v for k, v in vector["params"].items() if k not in UNBOUND}
    binding = canonical([vector["method"], vector["principal"], salient])
    digest = b64(hashlib.sha256(binding.encode()).digest())
    assert (kid, payload, digest) == (expect["kid"], expect["payload"], expect["binding_digest"])
    if not vector["encrypted"]:
        signed = f"v1.{kid}.{b64(payload.encode())}"
        mac = b64(hmac.digest(secret, f"{signed}.{digest}".encode(), "sha256"))
        assert f"{signed}.{mac}" == expect["token"]
        return
    key = hkdf_sha256(secret, b"snodo/state/e1/aes-256-gcm")
    reference = HKDF(hashes.SHA256(), 32, salt=None, info=b"snodo/state/e1/aes-256-gcm")
    assert key == reference.derive(secret)
    assert key.hex() == expect["key"]
    aad = f"e1.{kid}.{digest}"
    assert aad == expect["aad"]
    nonce = random
    assert len(nonce) == 12
    box = nonce + AESGCM(key).encrypt(nonce, payload.encode(), aad.encode())
    assert f"e1.{kid}.{b64(box)}" == expect["token"]


@pytest.mark.parametrize("vector", doc_vectors(ONCE_AND_ENCRYPTED_VECTORS), ids=lambda v: v["name"])
def test_vector_opens_until_it_expires(vector: dict[str, Any]) -> None:
    ctx = vector_ctx(vector)
    keyring, principal = Keyring(ttl=vector["ttl"], **vector_options(vector)), vector["principal"]
    token = vector["expect"]["token"]
    expires = math.floor(vector["clock"]) + vector["ttl"]

    def opened(at: Ctx) -> Any:
        if not vector["once"]:
            return keyring.open(token, at, principal=principal)
        guard = MemoryGuard(clock=at.clock)
        return asyncio.run(keyring.open_once(token, at, principal=principal, guard=guard))

    assert opened(ctx) == vector["data"]
    assert opened(replace(ctx, now=expires - 0.001)) == vector["data"]
    with pytest.raises(InvalidState):
        opened(replace(ctx, now=expires))


# --- secrecy and the default --------------------------------------------------------------


def test_readable_hmac_tokens_stay_the_default() -> None:
    token = Keyring(secret=KEY_A).seal(DATA, Ctx(), principal="alice")
    assert token.startswith("v1.")
    assert state.inspect(token)["data"] == DATA


def test_the_payload_cannot_be_read_from_the_token() -> None:
    secret_data = {"card": "4111 1111 1111 1111", "pin": "0000"}
    token = Keyring(encrypted=True, secret=KEY_A).seal(secret_data, Ctx(), principal="alice")
    version, kid, box = token.split(".")
    assert (version, kid) == ("e1", state.fingerprint(KEY_A))
    raw = base64.urlsafe_b64decode(box + "==")
    plaintext = canonical(secret_data).encode()
    for haystack in (token.encode(), raw):
        for needle in (b"4111", b"card", plaintext[:8], b64(plaintext).encode()[:8]):
            assert needle not in haystack
    assert state.inspect(token) == {"version": "e1", "kid": kid}
    assert Keyring(secret=KEY_A).open(token, Ctx(), principal="alice") == secret_data


def test_same_data_seals_to_different_tokens_and_the_key_is_derived() -> None:
    one = Keyring(encrypted=True, secret=KEY_A).seal(DATA, Ctx(), principal="alice")
    two = Keyring(encrypted=True, secret=KEY_A).seal(DATA, Ctx(), principal="alice")
    assert one.split(".")[2][:16] != two.split(".")[2][:16], "a fresh nonce each time"
    kid, box = one.split(".")[1], base64.urlsafe_b64decode(one.split(".")[2] + "==")
    salient = {k: v for k, v in Ctx().request_params.items() if k not in UNBOUND}
    digest = b64(hashlib.sha256(canonical(["tools/call", "alice", salient]).encode()).digest())
    aad = f"e1.{kid}.{digest}".encode()
    derived = hkdf_sha256(KEY_A, b"snodo/state/e1/aes-256-gcm")
    assert json.loads(AESGCM(derived).decrypt(box[:12], box[12:], aad))["data"] == DATA
    with pytest.raises(InvalidTag):  # the secret itself is never the AES key
        AESGCM(KEY_A).decrypt(box[:12], box[12:], aad)


@pytest.mark.parametrize(
    "data",
    [None, True, 0, 2**70, 1.5, -0.0, "", "é 🐙", [], {}, [1, 1.0, True], {"a": {"b": [None]}}],
)
def test_any_json_value_round_trips_encrypted(data: Any) -> None:
    opened = Keyring(secret=KEY_A).open(
        Keyring(encrypted=True, secret=KEY_A).seal(data, Ctx(), principal="alice"),
        Ctx(),
        principal="alice",
    )
    assert opened == data
    assert type(opened) is type(data)


# --- one error for every failure ----------------------------------------------------------


def failures(token: str) -> dict[str, Callable[[], Any]]:
    """Every way to present ``token`` (e1, sealed for Ctx(), KEY_A, alice) that must fail."""
    ring = Keyring(secret=KEY_A)

    def present(presented: Any, ctx: Ctx | None = None) -> Callable[[], Any]:
        return lambda: ring.open(presented, Ctx() if ctx is None else ctx, principal="alice")

    cases = {name: present(token, ctx) for name, ctx in OTHER_REQUESTS.items()}
    version, kid, box = token.split(".")

    def flip(index: int) -> str:
        char = box[index]
        return f"{version}.{kid}.{box[:index]}{'A' if char != 'A' else 'B'}{box[index + 1 :]}"

    cases |= {
        "other principal": lambda: ring.open(token, Ctx(), principal="bob"),
        "anonymous": lambda: ring.open(token, Ctx()),
        "other key": lambda: Keyring(secret=KEY_B).open(token, Ctx(), principal="alice"),
        "keyring without the key": lambda: Keyring(keys=[("b", KEY_B)]).open(
            token, Ctx(), principal="alice"
        ),
        "expired": present(token, later(Ctx(), 300)),
        "opener allows a shorter life": lambda: Keyring(secret=KEY_A, ttl=299).open(
            token, Ctx(), principal="alice"
        ),
        "issued too far in the future": present(token, later(Ctx(), -61.5)),
        "nonce tampered": present(flip(3)),
        "ciphertext tampered": present(flip(30)),
        "tag tampered": present(flip(len(box) - 5)),
        "kid swapped": present(f"e1.other.{box}"),
        "bad kid": present(f"e1.a!b.{box}"),
        "v1 prefix": present(f"v1.{kid}.{box}"),
        "other version": present(f"e2.{kid}.{box}"),
        "four parts": present(f"{token}.x"),
        "two parts": present(f"e1.{box}"),
        "truncated box": present(token[:-1]),
        "box too short": present(f"e1.{kid}.{box[:36]}"),
        "empty box": present(f"e1.{kid}."),
        "padded box": present(f"{token}=="),
        "standard base64 alphabet": present(f"e1.{kid}.{box[:-4]}+/+/"),
        "spare bits set": present(spare_bits_set(token)),
        "non-ascii": present(token[:-1] + "é"),
        "oversized": present(token + "A" * state.MAX_TOKEN_LENGTH),
    }
    return cases


def spare_bits_set(token: str) -> str:
    """The same bytes in a non-canonical base64url spelling (last character's spare bits)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    head, last = token[:-1], token[-1]
    spare = {2: 0b1111, 3: 0b11}[len(token.split(".")[2]) % 4]
    changed = head + alphabet[alphabet.index(last) | spare]
    assert changed != token
    box = token.split(".")[2]
    assert base64.urlsafe_b64decode(changed.split(".")[2] + "==") == base64.urlsafe_b64decode(
        box + "=="
    )
    return changed


def test_every_failure_is_the_same_invalid_state() -> None:
    data = "x" * 10  # a box length that leaves spare bits in the last character
    token = Keyring(encrypted=True, secret=KEY_A).seal(data, Ctx(), principal="alice")
    assert len(token.split(".")[2]) % 4 in (2, 3)
    assert Keyring(secret=KEY_A).open(token, later(Ctx(), 299.49), principal="alice") == data
    seen = set()
    for name, attempt in failures(token).items():
        with pytest.raises(InvalidState) as caught:
            attempt()
        error = caught.value
        assert type(error) is InvalidState, name
        seen.add((str(error), repr(error.data), error.__cause__ is None))
    assert seen == {("Invalid request state", "None", True)}


def forge_e1(fields: str, key: bytes, kid: str, ctx: Ctx, principal: str | None = None) -> str:
    """An e1 token made with the real derived key around any plaintext: checks after the tag."""
    salient = {k: v for k, v in ctx.request_params.items() if k not in UNBOUND}
    digest = b64(
        hashlib.sha256(canonical([ctx.request_method, principal, salient]).encode()).digest()
    )
    nonce = bytes(12)
    enc_key = hkdf_sha256(key, b"snodo/state/e1/aes-256-gcm")
    sealed = AESGCM(enc_key).encrypt(nonce, fields.encode(), f"e1.{kid}.{digest}".encode())
    return f"e1.{kid}.{b64(nonce + sealed)}"


@pytest.mark.parametrize(
    "plaintext",
    [
        '{"data":1,"exp":1800000300,"iat":1800000000,"more":1}',
        '{"data":1,"exp":1800000300,"iat":1800000000,"jti":"short"}',
        '{"data":1,"exp":1800000300,"iat":1800000000,"jti":7}',
        '{"data":1,"exp":1800000300.0,"iat":1800000000}',
        '{"data":1,"exp":1800000301,"iat":1800000000}',
        '{"data":NaN,"exp":1800000300,"iat":1800000000}',
        '[{"data":1,"exp":1800000300,"iat":1800000000}]',
        '{"data":' + "[" * 33 + "]" * 33 + ',"exp":1800000300,"iat":1800000000}',
        "\xff",
        "",
    ],
)
def test_authentic_but_malformed_plaintexts_are_refused(plaintext: str) -> None:
    good = '{"data":1,"exp":1800000300,"iat":1800000000}'
    assert Keyring(secret=KEY_A).open(forge_e1(good, KEY_A, "k", Ctx()), Ctx()) == 1
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open(forge_e1(plaintext, KEY_A, "k", Ctx()), Ctx())


@functools.cache
def _one_token() -> str:
    return Keyring(encrypted=True, secret=KEY_A).seal(DATA, Ctx(), principal="alice")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_single_character_change_is_refused(data: st.DataObject) -> None:
    # One token for every example: a token sealed per example (a fresh nonce each time)
    # would make the drawn replacement depend on it, which hypothesis refuses as flaky.
    token = _one_token()
    index = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(
        st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.").filter(
            lambda c: c != token[index]
        )
    )
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_A).open(
            token[:index] + replacement + token[index + 1 :], Ctx(), principal="alice"
        )


# --- keys, rotation, limits, options -------------------------------------------------------


def test_secret_and_keyring_modes_open_each_others_encrypted_tokens() -> None:
    from_secret = Keyring(secret=KEY_A, encrypted=True).seal(DATA, Ctx())
    assert Keyring(keys=[("b", KEY_B), ("a", KEY_A)]).open(from_secret, Ctx()) == DATA
    from_ring = Keyring(keys=[("a", KEY_A), ("b", KEY_B)], encrypted=True).seal(DATA, Ctx())
    assert state.inspect(from_ring)["kid"] == "a"
    assert Keyring(secret=KEY_A).open(from_ring, Ctx()) == DATA
    with pytest.raises(InvalidState):
        Keyring(secret=KEY_B).open(from_ring, Ctx())
    with pytest.raises(InvalidState):  # renaming the kid breaks the tag, same secret or not
        Keyring(keys=[("z", KEY_A)]).open(from_ring.replace("e1.a.", "e1.z."), Ctx())


def test_three_step_rotation_across_two_keyrings_rejects_nothing_until_the_end() -> None:
    a, b = ("a", KEY_A), ("b", KEY_B)
    steps: list[list[tuple[str, bytes]]] = [[a], [a, b], [b, a], [b]]
    rings = [steps[0], steps[0]]

    def exchange() -> int:
        rejected = 0
        for sealer in rings:
            token = Keyring(keys=sealer, encrypted=True).seal("x", Ctx(), principal="p")
            for opener in rings:
                try:
                    assert Keyring(keys=opener).open(token, Ctx(), principal="p") == "x"
                except InvalidState:
                    rejected += 1
        return rejected

    in_flight = Keyring(keys=[a], encrypted=True).seal("old", Ctx(), principal="p")
    for step in steps[1:]:
        rings[0] = step
        assert exchange() == 0
        rings[1] = step
        assert exchange() == 0
    with pytest.raises(InvalidState):
        Keyring(keys=rings[0]).open(in_flight, Ctx(), principal="p")
    with pytest.raises(InvalidState):
        Keyring(keys=[b, ("c", KEY_C)]).open(in_flight, Ctx(), principal="p")


def test_both_formats_open_whatever_the_sealer_chose() -> None:
    """So a fleet can switch ``encrypted`` on or off node by node."""
    readable = Keyring(secret=KEY_A).seal(DATA, Ctx(), principal="alice")
    hidden = Keyring(encrypted=True, secret=KEY_A).seal(DATA, Ctx(), principal="alice")
    assert (
        Keyring(secret=KEY_A).open(readable, Ctx(), principal="alice")
        == Keyring(secret=KEY_A).open(hidden, Ctx(), principal="alice")
        == DATA
    )


def test_encrypted_tokens_respect_the_length_limit() -> None:
    big = Keyring(encrypted=True, secret=KEY_A).seal("x" * 6000, Ctx())
    assert len(big) <= state.MAX_TOKEN_LENGTH
    with pytest.raises(ValueError, match="exceeds"):
        Keyring(encrypted=True, secret=KEY_A).seal("x" * 6200, Ctx())


def test_encrypted_option_errors() -> None:
    Keyring(secret=KEY_A, encrypted=True)
    with pytest.raises(TypeError):
        Keyring(secret=KEY_A, encrypted="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Keyring(secret=KEY_A, encrypted=1).seal(DATA, Ctx())  # type: ignore[arg-type]


def test_without_cryptography_sealing_says_which_extra_and_opening_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fresh = bytes(range(100, 132))  # not yet cached with a cipher
    token = Keyring(secret=fresh, encrypted=True).seal(DATA, Ctx())
    readable = Keyring(secret=fresh).seal(DATA, Ctx())

    def missing() -> Any:
        raise ImportError("encrypted request state needs ... snodo[encrypted-state]")

    monkeypatch.setattr(state_keys, "aead", missing)
    other = bytes(range(140, 172))
    with pytest.raises(ImportError, match="encrypted-state"):
        Keyring(secret=other, encrypted=True)
    with pytest.raises(ImportError, match="encrypted-state"):
        Keyring(secret=other, encrypted=True).seal(DATA, Ctx())
    fresh_token = token.replace(state.fingerprint(fresh), state.fingerprint(other))
    with pytest.raises(InvalidState):
        Keyring(secret=other).open(fresh_token, Ctx())
    assert Keyring(secret=fresh).open(readable, Ctx()) == DATA
