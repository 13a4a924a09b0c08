"""Reading a request's head: lower-case names, repeated values joined, names kept bounded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from snodo.transports import http_head
from snodo.transports.http_head import read_headers


def _reference(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """RFC 9110 5.3: a repeated field's values joined with ", ", in order."""
    values: dict[str, list[str]] = {}
    for name, value in raw:
        values.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return {name: ", ".join(found) for name, found in values.items()}


names = st.sampled_from([b"Host", b"host", b"Accept", b"MCP-Protocol-Version", b"X-\xe9"])
lines = st.lists(st.tuples(names | st.binary(min_size=1, max_size=6), st.binary(max_size=8)))


@given(lines)
def test_the_head_reads_as_the_rfc_says(raw: list[tuple[bytes, bytes]]) -> None:
    assert read_headers(raw) == _reference(raw)


def test_names_a_peer_makes_up_do_not_grow_the_kept_names_past_the_bound() -> None:
    made_up = [(f"X-Made-Up-{i}".encode(), b"v") for i in range(3 * http_head.MAX_KNOWN_NAMES)]
    assert read_headers(made_up) == _reference(made_up)
    assert len(http_head._NAMES) <= http_head.MAX_KNOWN_NAMES
    assert read_headers([(b"Content-Type", b"application/json")]) == {
        "content-type": "application/json"
    }
