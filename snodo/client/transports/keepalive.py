"""A request lost by a reused keep-alive connection, sent again (the keep-alive race).

A server closes a connection that stayed idle past its keep-alive timeout; a client
that reuses the connection at that moment writes its request into a socket the server
is closing, and reads the end (or a reset) where the answer should be. The server never
began the request, so, as browsers do, it is sent again on another connection: only
when the connection had carried an earlier exchange (reused) and not one byte of this
request's answer arrived. A fresh connection that fails, or an answer cut off after
its first byte, is the caller's error, never sent twice; so is a request on a connection
the client's own pool closed under it (httpcore's pool can close one it has just handed
to a waiting request, encode/httpcore#1110): that request may have reached the server.

httpx does not tell which of these a failure was, so the client's pool is given a
network backend whose connections keep count (``resending``): one that ends or resets
under those two conditions raises ``Unanswered``, which httpx passes on unchanged
(``unanswered``). The module imports without httpx (httpcore is imported where used).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Unanswered", "resending", "unanswered"]


class Unanswered(ConnectionError):
    """A reused connection ended before any byte of the answer to the request on it."""


class _Stream:
    """A connection (an httpcore network stream) that knows whether it was reused and
    whether its answer began; ``failures`` are httpcore's read and write errors."""

    def __init__(self, inner: Any, failures: tuple[type[BaseException], ...]) -> None:
        self.inner = inner
        self.failures = failures
        self.heard = False
        """A byte arrived since the request now on the connection was written."""
        self.reused = False
        """An answer came on this connection before the request now on it."""
        self.closed_here = False
        """The pool closed the connection: a failure after that is no sign of the race."""

    def _lost(self) -> bool:
        """Whether a failure now is the keep-alive race: the server closing a reused
        connection before the request on it (nothing of its answer arrived)."""
        return self.reused and not self.heard and not self.closed_here

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            data: bytes = await self.inner.read(max_bytes, timeout)
        except self.failures as exc:
            if self._lost():
                raise Unanswered(f"the reused connection was reset: {exc}") from exc
            raise
        if data:
            self.heard = True
        elif self._lost():
            raise Unanswered("the reused connection closed before any byte of the answer")
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self.heard:  # the first write of the next request, after an answer
            self.reused, self.heard = True, False
        try:
            await self.inner.write(buffer, timeout)
        except self.failures as exc:
            if self._lost():
                raise Unanswered(f"the reused connection was closed: {exc}") from exc
            raise

    async def aclose(self) -> None:
        self.closed_here = True
        await self.inner.aclose()

    async def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> _Stream:
        tls = await self.inner.start_tls(ssl_context, server_hostname, timeout)
        return _Stream(tls, self.failures)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _Backend:
    """An httpcore network backend whose connections are ``_Stream``s."""

    def __init__(self, inner: Any, failures: tuple[type[BaseException], ...]) -> None:
        self.inner = inner
        self.failures = failures

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> _Stream:
        inner = await self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _Stream(inner, self.failures)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> _Stream:
        inner = await self.inner.connect_unix_socket(path, timeout, socket_options)
        return _Stream(inner, self.failures)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def resending(transport: Any) -> Any:
    """``transport`` (an ``httpx.AsyncHTTPTransport``, before its first request) with
    connections that raise ``Unanswered``; unchanged when its pool is not httpcore's."""
    import httpcore  # noqa: PLC0415 - optional dependency (snodo[http]), as httpx

    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore.AsyncNetworkBackend):
        failures = (httpcore.ReadError, httpcore.WriteError)
        pool._network_backend = _Backend(backend, failures)  # type: ignore[union-attr]
    return transport


def unanswered(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, a reused connection's ``Unanswered``."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, Unanswered):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
