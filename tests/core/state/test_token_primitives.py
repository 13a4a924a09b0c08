"""The primitives a state token is built from, each exactly its reference: canonical JSON
(orjson's text only where it is the standard encoder's), base64url (as the standard
library reads it), HMAC-SHA256 (as the hmac module computes it) and the request binding
(the digest of the canonical array, method names' text kept or not)."""

from __future__ import annotations

import base64
import copy
import enum
import hashlib
import hmac
import math
import re
import uuid
from collections import ChainMap, OrderedDict
from collections.abc import Iterator, Mapping
from importlib.util import find_spec
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snodo.core import jsonrpc
from snodo.core.input_requests import BuiltRequest
from snodo.core.state import canonical
from snodo.core.state import token as state_token
from snodo.core.state.keys import Key
from tests.support.state_vectors import PARAMS, Ctx
from tests.support.strategies import json_trees, strict_json_values

needs_orjson = pytest.mark.skipif(find_spec("orjson") is None, reason="orjson is in the dev extra")

# No floats and no null: the values orjson's text is used for. Any code point but the
# surrogates in strings and keys (controls, astral planes), integers of any size.
# Strings with lone surrogates too: a JSON parser lets them through from the peer.
surrogate_values = json_trees(
    st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=[]), max_size=4),
    width=3,
    key_size=4,
    max_leaves=8,
)
plain_values = json_trees(
    st.booleans() | st.integers() | st.text(st.characters(exclude_categories=["Cs"])),
    width=5,
    key_size=8,
    max_leaves=25,
)


@needs_orjson
@settings(max_examples=500, deadline=None)
@given(plain_values | strict_json_values)
def test_the_text_is_the_standard_encoders(value: Any) -> None:
    assert canonical.encode(value) == canonical._standard(value)


_FLOAT_OR_NULL = re.compile(rb"null|[0-9][.eE]")
"""The reference: where orjson's text may differ, as a regular expression says it."""


@settings(max_examples=1000, deadline=None)
@given(
    st.binary(max_size=40)
    | st.text(alphabet='0123456789.eEnul"xE9 ', max_size=30).map(str.encode)
    | plain_values.map(lambda value: canonical._standard(value).encode())
)
def test_may_differ_is_the_regular_expression(text: bytes) -> None:
    assert canonical.may_differ(text) == (_FLOAT_OR_NULL.search(text) is not None)


@needs_orjson
def test_plain_values_take_orjsons_text() -> None:
    value = {"b": [1, True, "\x01\n\u2028"], "a": {"\U0001f419": 2, "\uffff": 3}}
    fast = jsonrpc.write_fast(value, sort_keys=True)
    assert fast is not None and fast.decode() == canonical._standard(value)
    assert canonical.encode(value) == canonical._standard(value)


@pytest.mark.parametrize(
    "value",
    [
        1e-05,  # orjson writes 0.00001
        {"f": [1e16, -0.0, 0.1, 123456789012345.6]},
        {"none": None, "n": 1},
        "\ud800",  # a lone surrogate: orjson refuses it
        2**64,  # orjson refuses integers beyond 64 bits
        {"k": 2**70, "s": "x"},
    ],
)
def test_what_orjson_writes_differently_or_refuses_is_the_standard_encoders(value: Any) -> None:
    assert canonical.encode(value) == canonical._standard(value)


def test_a_built_request_is_written_sorted_whatever_text_it_keeps() -> None:
    built = BuiltRequest({"method": "roots/list", "params": {"b": 1, "a": [True, "x"]}})
    jsonrpc.encode({"kept": built})  # keeps its text, in the order it was built
    value = {"z": built, "a": 1}
    assert canonical.encode(value) == canonical._standard(value)
    assert canonical.encode(value).startswith('{"a":1,"z":{"method":"roots/list","params":{"a"')


@pytest.mark.parametrize("bad", [math.nan, math.inf, {"a": [-math.inf]}, {1: "int key", "a": 1}])
def test_what_the_standard_encoder_refuses_is_refused(bad: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        canonical._standard(bad)
    with pytest.raises((ValueError, TypeError)):
        canonical.encode(bad)


class Colour(enum.Enum):
    RED = "red"


def test_a_uuid_and_an_enum_member_are_their_values_either_way() -> None:
    token = uuid.UUID(int=7)
    for value in ([token, Colour.RED], [token, Colour.RED, 0.5]):  # fast and standard path
        text = canonical.encode(value)
        assert text.startswith(f'["{token}","red"')
        assert text == canonical._standard(value)


def _standard_unb64(text: str) -> bytes | str:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return "refused"


def _ours_unb64(text: str) -> bytes | str:
    try:
        return canonical.unb64(text)
    except ValueError:
        return "refused"


@settings(max_examples=500, deadline=None)
@given(
    st.binary(max_size=40).map(canonical.b64)
    | st.text(alphabet=canonical.B64_ALPHABET + "=+/.é \\n", max_size=40)
    | st.text(max_size=20)
)
def test_base64url_reads_as_the_standard_library_reads_it(text: str) -> None:
    assert _ours_unb64(text) == _standard_unb64(text)


@given(st.binary(max_size=64))
def test_base64url_round_trips(raw: bytes) -> None:
    assert canonical.unb64(canonical.b64(raw)) == raw


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=32, max_size=200), st.binary(max_size=300))
def test_a_keys_mac_is_hmac_sha256(secret: bytes, message: bytes) -> None:
    """Keys longer than SHA-256's block are hashed first, as RFC 2104 says."""
    assert Key(secret).mac(message) == hmac.digest(secret, message, "sha256")


class _ReadOnly(Mapping[str, Any]):
    """A mapping with no copy() of its own."""

    def __init__(self, items: Mapping[str, Any]) -> None:
        self._items = dict(items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def _reference_binding(method: str, principal: str | None, params: dict[str, Any]) -> bytes:
    salient = {
        k: v
        for k, v in params.items()
        if k not in ("_meta", "inputResponses", "requestState")
        and not (k == "arguments" and v == {})
    }
    text = canonical._standard([method, principal, salient])
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=")


@given(
    st.sampled_from(["tools/call", "prompts/get", "resources/read"]) | st.text(max_size=12),
    st.none() | st.text(max_size=6),
)
def test_the_binding_is_the_canonical_arrays_digest_every_time(
    method: str, principal: str | None
) -> None:
    ctx = Ctx(request_method=method)
    expected = _reference_binding(method, principal, dict(PARAMS))
    for _ in range(2):  # the second time from the kept text of the method
        assert state_token._binding(ctx, principal) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["name", "arguments", "_meta", "requestState", "cursor", "uri"]),
        strict_json_values | surrogate_values | st.just({}),
        max_size=5,
    ),
    st.none() | st.text(max_size=6),
)
def test_the_binding_of_any_params_is_the_canonical_arrays_digest(
    params: dict[str, Any], principal: str | None
) -> None:
    """Floats, nulls, lone surrogates and empty arguments included: the bytes path
    writes what the standard encoder's text, encoded with surrogatepass, would be."""
    expected = _reference_binding("tools/call", principal, params)
    before = copy.deepcopy(params)
    # As a plain dict, as a Context holds it (a proxy over a dict), and as proxies over
    # other mappings (whose copy() is not a dict, or is missing): one binding, and the
    # caller's params untouched.
    for held in (
        params,
        MappingProxyType(params),
        MappingProxyType(OrderedDict(params)),
        MappingProxyType(ChainMap(dict(params))),  # its copy() is a ChainMap, not JSON
        MappingProxyType(_ReadOnly(params)),
    ):
        ctx = Ctx(request_method="tools/call", request_params=held)
        assert state_token._binding(ctx, principal) == expected
    assert params == before


@settings(max_examples=500, deadline=None)
@given(plain_values | strict_json_values | surrogate_values)
def test_the_utf8_text_is_the_standard_encoders_with_or_without_the_float_search(
    value: Any,
) -> None:
    """``floats=False`` only where ``check_data`` found none, as the sealer passes it."""
    expected = canonical._standard(value).encode("utf-8", "surrogatepass")
    assert canonical.encode_utf8(value, errors="surrogatepass") == expected
    try:
        floats = canonical.check_data(value)
        strict = canonical._standard(value).encode()
    except ValueError:  # a lone surrogate: data refuses it
        with pytest.raises(ValueError):
            canonical.encode_utf8(value)
        return
    assert canonical.encode_utf8(value) == strict
    assert canonical.encode_utf8(value, floats) == strict


def test_check_data_says_whether_a_float_is_inside() -> None:
    assert canonical.check_data({"a": [1, "x", None, True]}) is False
    assert canonical.check_data({"a": [1, {"b": [0.5]}]}) is True
    assert canonical.check_data({"a": [1.0], "b": 2}) is True


def test_made_up_methods_do_not_grow_the_kept_method_texts_past_the_bound() -> None:
    for i in range(3 * state_token.MAX_KNOWN_METHODS):
        state_token._binding(Ctx(request_method=f"made/up/{i}"), None)
    assert len(state_token._METHOD_TEXTS) <= state_token.MAX_KNOWN_METHODS
