"""An HTTP answer's head as the client's HTTP/1.1 (``http11``) reads it: bounded, and a
header given on several lines joined once.

A hostile server could send a head of any size (httptools holds an incomplete head, a
long header value included, until it ends) or repeat one header on thousands of lines.
``Head`` counts the bytes read while the head is incomplete and those of each header
line parsed, refuses past ``MAX_HEAD`` bytes or ``MAX_HEADER_LINES`` lines (an interim
answer's head counts with the final one's), and joins a repeated header's values once,
when the head is complete, rather than once per line.
"""

from __future__ import annotations

__all__ = ["MAX_HEAD", "MAX_HEADER_LINES", "Head", "HeadTooLarge"]

MAX_HEAD = 64 * 1024
"""Bytes of an answer's head (interim answers' heads included)."""
MAX_HEADER_LINES = 100
"""Header lines of an answer (interim answers' included)."""


class HeadTooLarge(ConnectionError):
    """An answer's head past the bounds: the connection cannot be read on."""


class Head:
    """The bounds of one answer's head, and its repeated headers until it is complete."""

    __slots__ = ("lines", "parsed", "read", "repeated")

    def __init__(self) -> None:
        self.read = 0
        """Bytes read while the head is incomplete (all of them are the head's)."""
        self.parsed = 0
        """Bytes of the header lines parsed (for a head that ends inside a larger read)."""
        self.lines = 0
        self.repeated: dict[str, list[str]] = {}

    def reading(self, size: int) -> None:
        """``size`` more bytes of a head not yet complete."""
        self.read += size
        if self.read > MAX_HEAD:
            raise HeadTooLarge(f"the answer's head is over {MAX_HEAD} bytes")

    def header(self, headers: dict[str, str], name: bytes, value: bytes) -> None:
        """One header line, into ``headers`` (names in lower case)."""
        self.lines += 1
        self.parsed += len(name) + len(value) + 4
        if self.lines > MAX_HEADER_LINES:
            raise HeadTooLarge(f"the answer's head is over {MAX_HEADER_LINES} lines")
        if self.parsed > MAX_HEAD:
            raise HeadTooLarge(f"the answer's head is over {MAX_HEAD} bytes")
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        if key in headers:
            self.repeated.setdefault(key, [headers[key]]).append(text)
        else:
            headers[key] = text

    def complete(self, headers: dict[str, str]) -> None:
        """The head is whole: each repeated header's values joined, once."""
        if self.repeated:
            headers.update((key, ", ".join(values)) for key, values in self.repeated.items())
            self.repeated.clear()
