"""Reading a request's head: lower-case names, repeated values joined, names kept bounded;
kept Host verdicts and the declared-length check agree with working them out afresh."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from snodo.transports import http_head
from snodo.transports.http_head import HeadRules, read_headers


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
    assert read_headers(raw) == _reference(raw)  # every name known now: the one-pass read
    assert read_headers(iter(raw)) == _reference(raw)  # any iterable, not only a list


def test_names_a_peer_makes_up_do_not_grow_the_kept_names_past_the_bound() -> None:
    made_up = [(f"X-Made-Up-{i}".encode(), b"v") for i in range(3 * http_head.MAX_KNOWN_NAMES)]
    assert read_headers(made_up) == _reference(made_up)
    assert len(http_head._NAMES) <= http_head.MAX_KNOWN_NAMES
    assert read_headers([(b"Content-Type", b"application/json")]) == {
        "content-type": "application/json"
    }


def _rules(max_body_bytes: int = 4_194_304) -> HeadRules:
    return HeadRules("/mcp", ["localhost", "127.0.0.1", "[::1]"], None, max_body_bytes, False)


authorities = st.one_of(
    st.sampled_from(["localhost:8000", "127.0.0.1", "[::1]:1", "LOCALHOST:65535", "evil.com"]),
    st.builds(
        "{}:{}".format,
        st.sampled_from(["localhost", "127.0.0.1", "example.org", "[::1]", ""]),
        st.text("0123456789a \u0665", max_size=7),
    ),
    st.text(max_size=12),
)


@given(st.lists(authorities, max_size=8))
def test_a_kept_host_verdict_is_the_verdict_worked_out_afresh(seen: list[str]) -> None:
    rules = _rules()
    for _ in range(2):  # the second pass reads the kept verdicts
        for authority in seen:
            assert rules.host_allowed(authority) == rules._host_allowed(authority)


def test_host_headers_a_peer_makes_up_do_not_grow_the_kept_verdicts_past_the_bound() -> None:
    rules = _rules()
    for i in range(3 * http_head.MAX_KNOWN_HOSTS):
        assert not rules.host_allowed(f"host-{i}.example:80")
    assert len(rules.host_verdicts) == http_head.MAX_KNOWN_HOSTS
    assert rules.host_allowed("localhost:8000")


@given(st.integers(min_value=1, max_value=10**9), st.text("0123456789x\u0665", max_size=12))
def test_a_declared_length_is_refused_exactly_past_the_limit(limit: int, length: str) -> None:
    scope = {"path": "/mcp", "method": "POST"}
    headers = {"host": "localhost", "content-type": "application/json", "content-length": length}
    refusal = _rules(limit).refuse(scope, headers)
    too_long = length.isdigit() and int(length) > limit
    assert (refusal is not None and refusal.status == 413) == too_long
    assert refusal is None or refusal.status == 413
