"""uvicorn's HTTP/1.1 protocols with the bounds its parsers lack, for ``snodo run``.

Neither of uvicorn's parsers bounds how long a client may take to send a request's head
or body, nor how many connections one address may hold, and httptools takes header
lines of any length: a few hundred clients trickling a byte now and then hold every
place under ``--limit-concurrency`` and everyone else gets 503 (slow loris). These
subclasses add, per connection:

* a head deadline: the request head must be complete ``head_timeout`` seconds after the
  connection opens or its first byte arrives (408, then closed);
* a body deadline: the whole body must arrive within ``body_timeout`` seconds of the
  head (closed; the app reads a disconnect);
* a per-address cap: one client address holds at most ``max_per_address`` connections
  (503 and closed beyond), beside uvicorn's global ``limit_concurrency``;
* a header line cap: a request line or header line longer than ``max_line`` bytes, or
  an incomplete head past ``max_head`` bytes, is 431 and closed.

The usual request (head and body in one read) arms no timer: the head deadline set at
connect is cancelled when the head completes, and the checks after each read are a few
comparisons. The limits are ``install``'s (``snodo run`` calls it before uvicorn
starts; worker processes read them from ``SNODO_HTTP_LIMITS``), else the defaults;
served by hand, ``uvicorn.run(app, http="snodo.transports.http_guard:GuardedHttpTools")``.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Final

try:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ModuleNotFoundError as missing:  # a bare install: snodo run says so before this
    raise ModuleNotFoundError(
        "snodo.transports.http_guard needs the snodo[http] extra: pip install 'snodo[http]'"
    ) from missing

__all__ = [
    "LIMITS_ENV",
    "GuardLimits",
    "GuardedH11",
    "GuardedHttpTools",
    "guarded",
    "install",
    "limits_from_environment",
]

LIMITS_ENV: Final = "SNODO_HTTP_LIMITS"


@dataclass(frozen=True, slots=True)
class GuardLimits:
    """The bounds of one server's connections; every one must be positive."""

    head_timeout: float = 10.0
    """Seconds from a connection's start (or a request's first byte) to its complete head."""
    body_timeout: float = 30.0
    """Seconds from a complete head to the end of its body."""
    max_per_address: int = 64
    """Connections one client address may hold at once."""
    max_line: int = 8192
    """Bytes of the request line or of one header line (name and value)."""
    max_head: int = 65536
    """Bytes an incomplete request head may reach."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) <= 0:
                raise ValueError(f"GuardLimits.{name} must be positive")

    def to_environment(self) -> str:
        return json.dumps(asdict(self))


def limits_from_environment() -> GuardLimits:
    raw = os.environ.get(LIMITS_ENV)
    return GuardLimits() if not raw else GuardLimits(**json.loads(raw))


def install(limits: GuardLimits) -> None:
    """Serve with ``limits``: in this process (the classes are imported already) and in
    worker processes, which read them from the environment when they import this."""
    os.environ[LIMITS_ENV] = limits.to_environment()
    GuardedHttpTools.limits = GuardedH11.limits = limits


_HEAD, _BODY = 1, 2
"""What a connection waits for when a read leaves a request incomplete."""

_REASONS: Final = {
    408: b"Request Timeout",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}


def _answer(status: int, text: bytes) -> bytes:
    return (
        b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%s" % (status, _REASONS[status], len(text), text)
    )


class _Guard:
    """What both protocols add; mixed in before uvicorn's class, which does the rest."""

    limits: ClassVar[GuardLimits]
    # uvicorn's attributes, named here for the type checker.
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    client: tuple[str, int] | None
    cycle: Any
    server_state: Any

    def _guard_start(self) -> None:
        self._timer: asyncio.TimerHandle | None = None
        self._waiting = 0
        self._waiting_cycle: Any = None
        self._head_bytes = 0
        self._refusal: tuple[int, bytes] | None = None
        self._address = self.client[0] if self.client else None

    def _guard_connected(self) -> bool:
        """Count the connection under its address; False (answered 503) beyond the cap."""
        self._guard_start()
        self._arm(_HEAD)
        if self._address is None:
            return True
        counts = _counts(self.server_state)
        held = counts[self._address] = counts.get(self._address, 0) + 1
        if held > self.limits.max_per_address:
            self._refuse(503, b"too many connections from this address")
            return False
        return True

    def _guard_lost(self) -> None:
        self._disarm()
        if self._address is not None:
            counts = _counts(self.server_state)
            left = counts.get(self._address, 1) - 1
            if left > 0:
                counts[self._address] = left
            else:
                counts.pop(self._address, None)
            self._address = None  # counted off once

    def _after_read(self, size: int) -> None:
        """After the parser took a read: what the connection waits for now, its
        deadline armed once per head or body; an incomplete head past ``max_head``."""
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if self._reading_head():
            waiting = _HEAD
            self._head_bytes += size
            if self._head_bytes > self.limits.max_head:
                self._refuse(431, b"request head too large")
                return
        elif cycle is not None and cycle.more_body:
            waiting = _BODY  # or the rest of one answered early, which must come too
        else:
            waiting = 0
        if waiting != self._waiting or cycle is not self._waiting_cycle:
            if waiting != _HEAD:
                self._head_bytes = 0
            self._waiting_cycle = cycle
            self._arm(waiting)

    def _reading_head(self) -> bool:
        """Whether the parser holds part of a request head."""
        raise NotImplementedError

    def _arm(self, waiting: int) -> None:
        self._disarm()
        self._waiting = waiting
        if waiting:
            seconds = self.limits.head_timeout if waiting == _HEAD else self.limits.body_timeout
            self._timer = self.loop.call_later(seconds, self._expired, waiting)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self, waiting: int) -> None:
        self._timer = None
        if self.transport.is_closing() or waiting != self._waiting:
            return
        if waiting == _HEAD:
            self._refuse(408, b"request head not received in time")
        else:
            self.transport.close()  # the app's receive() reads a disconnect

    def _refuse(self, status: int, text: bytes) -> None:
        self._disarm()
        self._waiting = 0
        self.transport.write(_answer(status, text))
        self.transport.close()

    def _line_too_long(self) -> None:
        """Called from the parser: its error path answers, through ``send_400_response``."""
        self._refusal = (431, b"request line or header line too long")
        raise h11.RemoteProtocolError("line too long", error_status_hint=431)

    def _refused_or(self, msg: str, bad_request: Any) -> None:
        if self._refusal is not None:
            self._refuse(*self._refusal)
        else:
            bad_request(msg)


def _counts(server_state: Any) -> dict[str, int]:
    """Connections by client address, for every protocol of one uvicorn server."""
    counts: dict[str, int] | None = getattr(server_state, "snodo_per_address", None)
    if counts is None:
        counts = {}
        server_state.snodo_per_address = counts
    return counts


class GuardedHttpTools(_Guard, HttpToolsProtocol):
    """uvicorn's httptools protocol with ``GuardLimits`` (the default parser)."""

    limits = limits_from_environment()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._guard_connected()

    def connection_lost(self, exc: Exception | None) -> None:
        self._guard_lost()
        super().connection_lost(exc)

    in_head = False
    """Between the parser's message begin and headers complete."""

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._after_read(len(data))

    def _reading_head(self) -> bool:
        return self.in_head

    def on_message_begin(self) -> None:
        self.in_head = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self.in_head = False
        super().on_headers_complete()

    def on_url(self, url: bytes) -> None:
        if len(self.url) + len(url) > self.limits.max_line:
            self._line_too_long()
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(name) + len(value) > self.limits.max_line:
            self._line_too_long()
        super().on_header(name, value)

    def send_400_response(self, msg: str) -> None:
        self._refused_or(msg, super().send_400_response)


class GuardedH11(_Guard, H11Protocol):
    """uvicorn's h11 protocol with ``GuardLimits``; h11 bounds an incomplete head itself
    (``--h11-max-incomplete-event-size``), the lines of a whole one are checked here."""

    limits = limits_from_environment()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        parse = self.conn.next_event
        max_line = self.limits.max_line

        def checked() -> Any:
            event = parse()
            if type(event) is h11.Request and (
                len(event.target) > max_line
                or any(len(name) + len(value) > max_line for name, value in event.headers)
            ):
                self._line_too_long()
            return event

        self.conn.next_event = checked  # type: ignore[method-assign]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._guard_connected()

    def connection_lost(self, exc: Exception | None) -> None:
        self._guard_lost()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._after_read(len(data))

    def _reading_head(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def send_400_response(self, msg: str) -> None:
        self._refused_or(msg, super().send_400_response)


def guarded(http: str) -> str:
    """The import string of the guarded protocol for uvicorn's ``http`` option (a
    string, so that ``--workers`` processes import it themselves)."""
    name = "GuardedH11" if http == "h11" else "GuardedHttpTools"
    return f"snodo.transports.http_guard:{name}"
