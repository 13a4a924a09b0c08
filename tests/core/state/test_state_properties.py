"""Properties of snodo.core.state: any change to a token is refused; any JSON value round-trips."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from snodo.core import state
from snodo.core.errors import InvalidState
from snodo.core.state import canonical
from snodo.core.state.keyring import Keyring
from tests.support.state_vectors import DATA, KEY_A, KEY_B, PARAMS, Ctx
from tests.support.strategies import strict_json_values
from tests.support.typed_json import tagged

SETTINGS = settings(max_examples=200, deadline=None)
KEYS = [("b", KEY_B), ("a", KEY_A)]
TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."

principals = st.none() | st.text(max_size=10)
Sealed = tuple[str, str | None]
"""A token and the principal it was sealed for."""


def rejected(token: str, principal: str | None) -> bool:
    try:
        Keyring(keys=KEYS).open(token, Ctx(), principal=principal)
    except InvalidState:
        return True
    return False


@st.composite
def sealed(draw: st.DrawFn) -> Sealed:
    principal = draw(principals)
    data = draw(st.sampled_from([DATA, None, "x", [1, 1.0, True], {"k": "é🐙"}]))
    keys = draw(st.sampled_from([KEYS, [("a", KEY_A)]]))
    token = Keyring(keys=keys).seal(data, Ctx(), principal=principal)
    assert not rejected(token, principal)
    return token, principal


@SETTINGS
@given(sealed(), st.data())
def test_any_single_character_change_is_refused(case: Sealed, data: st.DataObject) -> None:
    token, principal = case
    index = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(
        (st.sampled_from(TOKEN_ALPHABET) | st.characters()).filter(lambda c: c != token[index])
    )
    assert rejected(token[:index] + replacement + token[index + 1 :], principal)


@SETTINGS
@given(sealed(), st.data())
def test_any_bit_flip_is_refused(case: Sealed, data: st.DataObject) -> None:
    token, principal = case
    raw = bytearray(token.encode("ascii"))
    index = data.draw(st.integers(0, len(raw) - 1))
    raw[index] ^= 1 << data.draw(st.integers(0, 7))
    assert rejected(raw.decode("latin-1"), principal)


@SETTINGS
@given(sealed(), st.data())
def test_any_truncation_is_refused(case: Sealed, data: st.DataObject) -> None:
    token, principal = case
    assert rejected(token[: data.draw(st.integers(0, len(token) - 1))], principal)


@SETTINGS
@given(sealed(), st.text(TOKEN_ALPHABET, min_size=1) | st.text(min_size=1), st.booleans())
def test_any_extension_is_refused(case: Sealed, extra: str, front: bool) -> None:
    token, principal = case
    assert rejected(extra + token if front else token + extra, principal)


@SETTINGS
@given(sealed(), st.data())
def test_any_insertion_or_deletion_is_refused(case: Sealed, data: st.DataObject) -> None:
    token, principal = case
    index = data.draw(st.integers(0, len(token) - 1))
    if data.draw(st.booleans()):
        changed = token[:index] + data.draw(st.sampled_from(TOKEN_ALPHABET)) + token[index:]
    else:
        changed = token[:index] + token[index + 1 :]
    assert rejected(changed, principal)


@SETTINGS
@given(strict_json_values, principals)
@example([1, 1.0, True, -0.0, 2**64], None)
@example({"": {"é": ["🐙", None]}}, "")
def test_any_json_value_round_trips(value: Any, principal: str | None) -> None:
    token = Keyring(secret=KEY_A).seal(value, Ctx(), principal=principal)
    assert tagged(Keyring(keys=KEYS).open(token, Ctx(), principal=principal)) == tagged(value)
    assert tagged(state.inspect(token)["data"]) == tagged(value)


@SETTINGS
@given(strict_json_values, st.randoms(use_true_random=False))
def test_key_order_never_changes_the_token(value: Any, rng: random.Random) -> None:
    def shuffled(item: Any) -> Any:
        if isinstance(item, dict):
            pairs = list(item.items())
            rng.shuffle(pairs)
            return {key: shuffled(inner) for key, inner in pairs}
        if isinstance(item, list):
            return [shuffled(inner) for inner in item]
        return item

    params = {**PARAMS, "arguments": value}
    one = Keyring(secret=KEY_A).seal(value, Ctx(request_params=params))
    two = Keyring(secret=KEY_A).seal(shuffled(value), Ctx(request_params=shuffled(params)))
    assert one == two


@SETTINGS
@given(st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_arbitrary_strings_are_refused_with_invalid_state_only(text: str) -> None:
    assert rejected(text, None)
    assert rejected("v1.a." + text, None)


@SETTINGS
@given(strict_json_values, st.integers(min_value=0, max_value=40))
def test_a_payload_reads_as_the_standard_decoder_reads_it(value: Any, depth: int) -> None:
    text = canonical.encode(value)
    raw = ("[" * depth + text + "]" * depth).encode("utf-8", "surrogatepass")
    try:
        standard: Any = tagged(canonical.decode(raw.decode("utf-8", "surrogatepass")))
        if canonical.too_deep(raw.decode("utf-8", "surrogatepass")):
            standard = "refused"
    except ValueError:
        standard = "refused"
    try:
        ours: Any = tagged(canonical.read_payload(raw))
    except ValueError:
        ours = "refused"
    if "\\ud8" in text.lower() or any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return  # lone surrogates: not UTF-8, refused by both before any value is read
    assert ours == standard
