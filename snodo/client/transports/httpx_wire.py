"""The client's HTTP exchanges over an ``httpx.AsyncClient``: where a program hands one
in, or an ``httpx.Auth`` (``snodo.oauth``) that must see every request, or the
environment names a proxy for the URL.

It offers what ``http11.Origin`` does (``open`` a request, read the ``Answer``'s
status, headers and body, ``aclose``), so ``HttpTransport`` reads the two alike. A
client it makes itself gets the keep-alive resend (``keepalive.resending``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from snodo.client.transports.keepalive import resending

__all__ = ["HttpxAnswer", "HttpxWire"]


class HttpxAnswer:
    """An httpx response, streamed, as an ``http11.Answer`` reads."""

    __slots__ = ("response",)

    def __init__(self, response: httpx.Response) -> None:
        self.response = response

    @property
    def status(self) -> int:
        return self.response.status_code

    def header(self, name: str) -> str:
        value: str = self.response.headers.get(name, "")
        return value

    def chunks(self) -> AsyncIterator[bytes]:
        return self.response.aiter_bytes()

    async def aclose(self) -> None:
        await self.response.aclose()


class HttpxWire:
    """Requests to one URL through ``client`` (made here when None)."""

    def __init__(self, url: str, client: Any, auth: Any, timeout: float) -> None:
        self.url = url
        self.client: httpx.AsyncClient = client or httpx.AsyncClient(
            timeout=timeout, auth=auth, transport=resending(httpx.AsyncHTTPTransport())
        )
        self.listen_timeout = httpx.Timeout(timeout, read=None)
        """The standalone GET stream may stay quiet for as long as the session lasts."""
        self.errors: tuple[type[BaseException], ...] = (
            httpx.HTTPError,
            httpx.StreamError,
            OSError,
        )

    async def open(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        *,
        listen: bool = False,
    ) -> HttpxAnswer:
        options: dict[str, Any] = {"headers": headers}
        if body is not None:
            options["content"] = body
        if listen:
            options["timeout"] = self.listen_timeout
        request = self.client.build_request(method, self.url, **options)
        return HttpxAnswer(await self.client.send(request, stream=True))

    async def aclose(self) -> None:
        await self.client.aclose()
