"""The client's SSE parser, on literal streams and on arbitrary bytes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.client.errors import LimitExceeded
from snodo.client.transports.sse_reader import SseReader

PING = b'{"jsonrpc":"2.0","id":1,"result":{}}'


def read_all(stream: bytes, split: int = 0, **limits: int) -> list[dict[str, object]]:
    reader = SseReader(**limits)
    if not split:
        return reader.feed(stream)
    found = []
    for start in range(0, len(stream), split):
        found += reader.feed(stream[start : start + split])
    return found


@pytest.mark.parametrize("split", [0, 1, 3, 7])
@pytest.mark.parametrize("end", [b"\n", b"\r", b"\r\n"])
def test_line_ends_and_chunk_boundaries_do_not_change_the_events(split: int, end: bytes) -> None:
    stream = end.join(
        [
            b": keep-alive",
            b"",
            b"event: message",
            b"id: 41",
            b"retry: 1500",
            b'data: {"jsonrpc":"2.0",',
            b'data:"id":1,"result":{}}',
            b"",
            b"",
        ]
    )
    assert read_all(stream, split) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_id_and_retry_are_kept_for_a_resumption() -> None:
    reader = SseReader()
    reader.feed(b"id: abc\nretry: 2500\ndata: " + PING + b"\n\n")
    assert (reader.last_id, reader.retry) == ("abc", 2.5)
    reader.feed(b"retry: soon\n\n")
    assert reader.retry == 2.5, "a retry that is not digits is ignored"


def test_only_data_fields_make_a_message() -> None:
    assert read_all(PING + b"\n\n") == []
    assert read_all(b"event: " + PING + b"\n\n") == []
    assert read_all(b"data:" + PING + b"\n") == [], "an event left open at the end is dropped"
    assert read_all(b"data: [1]\n\ndata: not json\n\n") == []


def test_line_and_event_sizes_are_capped() -> None:
    with pytest.raises(LimitExceeded):
        read_all(b"data: " + b"x" * 200, split=16, max_line=100)
    with pytest.raises(LimitExceeded):
        read_all(b"data: xxxxxxxx\n" * 20, max_event=100)


@given(st.lists(st.binary(max_size=64), max_size=20))
def test_arbitrary_bytes_raise_nothing_but_the_limit(chunks: list[bytes]) -> None:
    reader = SseReader(max_line=128, max_event=256)
    try:
        for chunk in chunks:
            for message in reader.feed(chunk):
                assert isinstance(message, dict)
    except LimitExceeded:
        pass
