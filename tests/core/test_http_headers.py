"""snodo.core.http_headers: header values mirrored from the body (plain text, or the base64
sentinel, both ways) and the check of a request's headers against its body."""

from __future__ import annotations

import base64
import re

from hypothesis import given
from hypothesis import strategies as st

from snodo.core.errors import HeaderMismatch
from snodo.core.http_headers import check_headers, decode_value, encode_value

SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$", re.DOTALL)


def _reference(raw: str) -> str:
    """The sentinel rule alone: only text matching it in full is base64 to decode."""
    found = SENTINEL.match(raw)
    if found is None:
        return raw
    try:
        return base64.b64decode(found.group(1), validate=True).decode("utf-8")
    except ValueError:  # binascii.Error, UnicodeDecodeError, non-ASCII base64 text
        return "malformed"


def _ours(raw: str) -> str:
    try:
        return decode_value(raw)
    except ValueError:
        return "malformed"


prefixes = st.sampled_from(["", "=", "=?", "=?base64", "=?base64?", "=?BASE64?", " =?base64?"])
suffixes = st.sampled_from(["", "?", "?=", "=?=", "?=\n"])


@given(
    prefixes,
    st.text(max_size=12) | st.binary(max_size=9).map(lambda b: base64.b64encode(b).decode()),
    suffixes,
)
def test_a_value_decodes_as_the_sentinel_rule_says(prefix: str, middle: str, suffix: str) -> None:
    raw = prefix + middle + suffix
    assert _ours(raw) == _reference(raw)


@given(st.text(max_size=20) | st.integers() | st.booleans())
def test_encoded_values_decode_to_their_text(value: str | int | bool) -> None:
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    assert decode_value(encode_value(value)) == text


names = st.one_of(
    st.text(max_size=8),
    st.builds("{}{}{}".format, prefixes, st.text(max_size=8), suffixes),
    st.binary(max_size=6).map(lambda b: "=?base64?" + base64.b64encode(b).decode() + "?="),
)


@given(names, st.one_of(names, names.map(encode_value), st.just(None)))
def test_mcp_name_is_checked_as_the_sentinel_rule_says(name: str, raw: str | None) -> None:
    """The header matches when it stands for the name (sentinel decoded, blanks around
    it dropped), the header equal to the name included only when it is no sentinel."""
    headers = {"mcp-method": "tools/call"} | ({} if raw is None else {"mcp-name": raw})
    try:
        expected = raw is not None and decode_value(raw.strip(" \t")) == name
    except ValueError:
        expected = False
    try:
        check_headers(headers, "tools/call", {"name": name})
    except HeaderMismatch:
        assert not expected
    else:
        assert expected
    encoded = {"mcp-method": "tools/call", "mcp-name": encode_value(name)}
    check_headers(encoded, "tools/call", {"name": name})  # the client's own header matches
