"""The user agent: who takes the authorization URL and comes back with the redirect.

In an application that is a browser and a local callback listener
(``BrowserUserAgent``: the person's browser, and a listener on the loopback redirect
URI); the flow only needs the URL the authorization server redirected to, so
``UserAgent`` is one method. ``HeadlessUserAgent`` serves tests and unattended runs
against an authorization server that approves without a login page: it requests the
authorization URL and follows redirects itself until one points at the redirect URI,
without ever requesting the redirect URI.

Whatever the authorization server's metadata says, only an ``https:`` address (or
``http:`` on a loopback host, for local servers) is handed to a user agent
(``check_authorization_url``): a ``file:``, ``javascript:`` or application address
given to a browser opener would open a local file or start a program instead of a
login page.
"""

from __future__ import annotations

import asyncio
import ipaddress
import webbrowser
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

from snodo.oauth.errors import OAuthError

__all__ = ["BrowserUserAgent", "HeadlessUserAgent", "UserAgent", "check_authorization_url"]


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_authorization_url(url: str) -> str:
    """``url`` if a user agent may be sent there: ``https:``, or ``http:`` on a loopback
    host, with a host and nothing unprintable in it; OAuthError naming it otherwise."""
    shown = repr(url[:200])
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        raise OAuthError(
            f"refused to open the authorization address {shown}: "
            "it holds spaces or control characters"
        )
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        host = (parts.hostname or "").lower()
    except ValueError:
        host = ""
    if scheme == "https" and host:
        return url
    if scheme == "http" and host and _loopback(host):
        return url
    raise OAuthError(
        f"refused to open the authorization address {shown}: only https: "
        "(or http: on a loopback host) may reach the user agent"
    )


class UserAgent(Protocol):
    """Takes the user to the authorization server and brings back its redirect."""

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        """Send the user to ``authorization_url``; return the URL the authorization
        server redirected back to (starting with ``redirect_uri``)."""
        ...


class HeadlessUserAgent:
    """Follows the authorization server's redirects without a browser or a person.

    ``approve=True`` is for tests: a page with a form on the way (an OAuth proxy's
    consent page, a test provider's sign-in) is submitted with its approving button
    (allow, approve, accept, ...), as a person who approves everything would; never
    point one at a real user's provider."""

    def __init__(
        self,
        *,
        max_redirects: int = 10,
        timeout: float = 10.0,
        transport: Any = None,
        approve: bool = False,
    ) -> None:
        self.max_redirects = max_redirects
        self.timeout = timeout
        self.transport = transport  # an httpx.AsyncBaseTransport, for tests
        self.approve = approve

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        """Follow redirects from ``authorization_url`` (and, with ``approve``, approve
        the forms met) to the first address that starts with ``redirect_uri``, without
        requesting it; OAuthError if none does."""
        import httpx  # noqa: PLC0415 - optional dependency (snodo[auth])

        url = check_authorization_url(authorization_url)
        async with httpx.AsyncClient(
            timeout=self.timeout, follow_redirects=False, transport=self.transport
        ) as client:
            request = client.build_request("GET", url)
            for _ in range(self.max_redirects):
                response = await client.send(request)
                location: str | None = response.headers.get("location")
                if response.is_redirect and location:
                    url = urljoin(str(request.url), location)
                    if url.startswith(redirect_uri):
                        return url
                    request = client.build_request("GET", check_authorization_url(url))
                    continue
                form = _approving(response.text) if self.approve and response.is_success else None
                if form is None:
                    raise OAuthError(
                        f"the authorization endpoint answered {response.status_code} "
                        "without redirecting back"
                    )
                action, method, fields = form
                target = check_authorization_url(urljoin(str(request.url), action or url))
                if method == "post":
                    request = client.build_request("POST", target, data=fields)
                else:
                    request = client.build_request("GET", target, params=fields)
        raise OAuthError("too many redirects before the redirect URI")


APPROVING = frozenset({"allow", "approve", "accept", "authorize", "consent", "continue", "yes"})
"""What an approving button's name, value or label says."""


class _Forms(HTMLParser):
    """The forms of a page: action, method, the fields sent, and each submit button."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[tuple[str, str, dict[str, str], list[tuple[str, str, str]]]] = []
        self._button: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append((found.get("action", ""), found.get("method", "get").lower(), {}, []))
        elif not self.forms:
            return
        elif tag == "input" and found.get("type", "text").lower() == "submit":
            value = found.get("value", "")
            self.forms[-1][3].append((found.get("name", ""), value, value))
        elif (
            tag == "input"
            and found.get("name")
            and found.get("type", "text").lower()
            in (
                "hidden",
                "text",
            )
        ):
            self.forms[-1][2][found["name"]] = found.get("value", "")
        elif tag == "button" and found.get("type", "submit").lower() == "submit":
            self._button = [found.get("name", ""), found.get("value", ""), ""]

    def handle_data(self, data: str) -> None:
        if self._button is not None:
            self._button[2] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "button" and self._button is not None and self.forms:
            name, value, label = self._button
            self.forms[-1][3].append((name, value, label.strip()))
            self._button = None


def _approving(page: str) -> tuple[str, str, dict[str, str]] | None:
    """The form and fields that approve on ``page``: its approving button pressed."""
    parser = _Forms()
    parser.feed(page)
    for action, method, fields, buttons in parser.forms:
        for name, value, label in buttons:
            words = set(f"{name} {value} {label}".lower().replace("_", " ").split())
            if words & APPROVING:
                return action, method, {**fields, **({name: value} if name else {})}
    return None


class BrowserUserAgent:
    """Sends the person to the authorization page in their browser (``open_page``,
    ``webbrowser.open`` by default, which honours ``BROWSER``), and listens on the
    loopback redirect URI for the page to send the browser back with a code."""

    def __init__(
        self, open_page: Callable[[str], object] = webbrowser.open, timeout: float = 300
    ) -> None:
        self.open_page = open_page
        self.timeout = timeout

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        """Open the page; return the redirect URI with the code, as it arrived."""
        check_authorization_url(authorization_url)
        back = urlsplit(redirect_uri)
        arrived: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def redirected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            request_line = (await reader.readline()).decode("latin-1").split()
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n")
            writer.write(b"\r\nDone: you can close this window.\n")
            await writer.drain()
            writer.close()
            target = request_line[1] if len(request_line) == 3 else ""
            if target.startswith(back.path) and not arrived.done():
                arrived.set_result(f"{back.scheme}://{back.netloc}{target}")

        listener = await asyncio.start_server(redirected, back.hostname, back.port)
        async with listener:
            await asyncio.to_thread(self.open_page, authorization_url)
            try:
                return await asyncio.wait_for(arrived, self.timeout)
            except TimeoutError:
                raise OAuthError("the browser did not come back in time") from None
