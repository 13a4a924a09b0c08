"""Reading a Server-Sent Events stream: bytes in, JSON-RPC messages out. No I/O.

Theory of operation (the WHATWG HTML "Server-sent events" parsing rules, which
basic/transports/streamable-http.mdx builds on). Lines end with CR, LF or CRLF. A line
starting with ``:`` is a comment (keep-alives); otherwise it is ``field: value`` (one
leading space dropped from the value), or a bare field name with an empty value. An
event's ``data`` lines are joined with LF; a blank line dispatches the event; an event
still open when the stream ends is dropped. Only ``data``, ``id`` and ``retry`` mean
anything here: other fields (``event``, unknown names, and so a JSON line without
``data:``) are ignored. Each dispatched ``data`` is one JSON-RPC message; one that is
not JSON (or not an object) is skipped.

Bounds: a line longer than ``max_line`` or an event's data longer than ``max_event``
bytes is ``LimitExceeded``, so a stream without line ends cannot grow the buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from snodo.client.errors import LimitExceeded
from snodo.core import jsonrpc
from snodo.core.errors import ParseError

__all__ = ["SseReader"]


class SseReader:
    """One stream's parser; ``last_id`` and ``retry`` (seconds) are what a reconnect
    (GET with Last-Event-ID after the retry delay) needs."""

    def __init__(self, max_line: int = 16 * 1024 * 1024, max_event: int = 16 * 1024 * 1024):
        self.max_line = max_line
        self.max_event = max_event
        self.buffer = bytearray()
        self.data: list[bytes] = []
        self.data_size = 0
        self.last_id: str | None = None
        self.retry: float | None = None
        self.scanned = 0
        """Bytes of ``buffer`` already searched for a line end (none there)."""
        self.after_cr = False
        """The last chunk ended with a CR: an LF starting the next belongs to it."""
        self.decode: Callable[[bytes], Any] = jsonrpc.decode
        """Reads each message, and a JSON answer's body (``snodo.client.transports.passthrough``
        for a proxy)."""

    def next_stream(self) -> None:
        """A new connection (a resumption) starts with no partial line or event; the
        last id and retry carry over."""
        self.buffer.clear()
        self.data, self.data_size, self.scanned = [], 0, 0
        self.after_cr = False

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Take the next bytes; return the messages of the events they complete."""
        if self.after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF split across chunks
        self.after_cr = False
        self.buffer += chunk
        found: list[dict[str, Any]] = []
        start = 0
        while True:
            end = _line_end(self.buffer, max(start, self.scanned))
            if end is None:
                self.scanned = max(0, len(self.buffer) - 1)
                break
            self.scanned = 0
            line_end, next_start = end
            self.after_cr = next_start == len(self.buffer) and self.buffer[line_end] == 13
            message = self._line(bytes(self.buffer[start:line_end]))
            if message is not None:
                found.append(message)
            start = next_start
        del self.buffer[:start]
        self.scanned = max(0, self.scanned - start)
        if len(self.buffer) > self.max_line:
            raise LimitExceeded(f"an SSE line longer than {self.max_line} bytes")
        return found

    def _line(self, line: bytes) -> dict[str, Any] | None:
        if len(line) > self.max_line:
            raise LimitExceeded(f"an SSE line longer than {self.max_line} bytes")
        if not line:
            return self._dispatch()
        if line.startswith(b":"):
            return None
        field, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self.data_size += len(value) + 1
            if self.data_size > self.max_event:
                raise LimitExceeded(f"an SSE event larger than {self.max_event} bytes")
            self.data.append(value)
        elif field == b"id" and b"\0" not in value:
            self.last_id = value.decode("utf-8", "replace")
        elif field == b"retry" and value.isdigit():
            self.retry = int(value) / 1000
        return None

    def _dispatch(self) -> dict[str, Any] | None:
        data, self.data, self.data_size = self.data, [], 0
        if not data:
            return None
        try:
            value = self.decode(b"\n".join(data))
        except ParseError:
            return None
        return value if isinstance(value, dict) else None


def _line_end(buffer: bytearray, start: int) -> tuple[int, int] | None:
    """Where the line ends (searching from ``start``) and the next begins; None while
    incomplete."""
    lf = buffer.find(b"\n", start)
    cr = buffer.find(b"\r", start, lf if lf != -1 else len(buffer))
    if cr != -1:
        return cr, cr + 2 if buffer[cr + 1 : cr + 2] == b"\n" else cr + 1
    if lf != -1:
        return lf, lf + 1
    return None
