"""The stdio line splitter: the same lines however the input is cut into reads."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snodo.transports import stdio

lines = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=20)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True) if b > a]


async def collect(chunks: list[bytes]) -> list[bytes]:
    pending = list(chunks)

    async def read() -> bytes:
        return pending.pop(0) if pending else b""

    return [line async for line in stdio._lines(read)]


@settings(max_examples=300, deadline=None)
@given(lines, st.lists(st.integers(min_value=0, max_value=900), max_size=12), st.booleans())
def test_lines_do_not_depend_on_how_reads_cut_the_input(
    given_lines: list[bytes], cuts: list[int], final_newline: bool
) -> None:
    data = b"\n".join(given_lines) + (b"\n" if final_newline else b"")
    expected = [line for line in data.split(b"\n") if line.strip()]
    assert asyncio.run(collect(split(data, cuts))) == expected


def test_an_over_long_line_is_reported_once_and_reading_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stdio, "MAX_LINE_BYTES", 10)
    data = b"short\n" + b"x" * 25 + b"\nnext\n" + b"y" * 11
    chunks = split(data, [3, 9, 14, 20, 33])
    assert asyncio.run(collect(chunks)) == [b"short", stdio.OVERSIZED, b"next", stdio.OVERSIZED]
