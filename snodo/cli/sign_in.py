"""``snodo auth``: sign in to an OAuth-protected server once, and keep the tokens.

    snodo auth login URL      sign in in the browser; the tokens are kept
    snodo auth token URL      print a valid access token (refreshed when it must be)
    snodo auth logout URL     forget them (--all: every server's)
    snodo auth list           the servers a sign-in is kept for

The tokens are kept per server in the user's configuration folder
(``snodo.oauth.kept``: owner-only files), with the client's registration, so signing in
again does not register again. ``snodo call``, ``snodo list`` and ``snodo proxy
--oauth`` send them, refreshed as they expire, with the other processes that use the
same sign-in kept in step by a lock on its file; when a refresh is refused they say in
one line to sign in again. ``--oauth`` on ``call`` and ``list`` signs in in the browser
when nothing is kept (and keeps what it got).

In tests, the browser is ``BROWSER``: a program that opens the page as a person would
(``webbrowser`` runs it with the URL) and approves the server's consent page and the
provider's sign-in; or, with the ``OAuth`` client in Python,
``HeadlessUserAgent(approve=True)``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import sys
import webbrowser
from typing import Any
from urllib.parse import urlsplit

from snodo.cli.failures import unanswered
from snodo.client import NotAuthorized

__all__ = [
    "NotSignedIn",
    "browser_agent",
    "is_kept",
    "kept_auth",
    "main",
    "register",
    "sign_in_failed",
]

NEEDS_AUTH = "signing in needs the snodo[auth] extra: pip install 'snodo[auth]'"

LOGIN_EXAMPLE = """examples:
  snodo auth login https://notes.example.com/mcp
  snodo call https://notes.example.com/mcp search query=handbook
  curl -H "authorization: Bearer $(snodo auth token https://notes.example.com/mcp)" ..."""


def register(commands: Any) -> None:
    """Add ``auth`` (login, token, logout, list) to the ``snodo`` command's sub-commands."""
    parser = commands.add_parser(
        "auth",
        help="sign in to an OAuth-protected server and keep the tokens",
        epilog=LOGIN_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="auth_command", required=True)
    login = actions.add_parser("login", help="sign in in the browser; the tokens are kept")
    login.add_argument("url", help="the server's MCP endpoint")
    login.add_argument(
        "--client-id",
        help="a client registered for snodo at the server (else it registers itself)",
    )
    login.add_argument(
        "--redirect-port",
        type=int,
        metavar="PORT",
        help="the loopback port of the redirect URI (what --client-id was registered with)",
    )
    login.add_argument("--timeout", type=float, default=300.0, help="seconds for the sign-in")
    token = actions.add_parser("token", help="print a valid access token for URL")
    token.add_argument("url")
    logout = actions.add_parser("logout", help="forget the tokens kept for URL")
    logout.add_argument("url", nargs="?")
    logout.add_argument("--all", action="store_true", help="every server's")
    actions.add_parser("list", help="the servers a sign-in is kept for")


class NotSignedIn:
    """The user agent of a run that may not open a browser: the sign-in is missing or
    could not be refreshed, which is the server's 401 (``NotAuthorized``) for whoever
    made the request."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        # What the server's 401 says once the kept tokens cannot be refreshed: said as
        # the client says any refusal of credentials, for the command to explain.
        described = "not signed in, or the sign-in expired and could not be refreshed"
        raise NotAuthorized(401, {"error": "invalid_token", "error_description": described})


def browser_agent(open_page: Any = None, timeout: float = 300.0) -> Any:
    """The person's browser, the address printed too (for a terminal with no browser)."""
    from snodo.oauth import BrowserUserAgent

    def show(url: str) -> object:
        print(f"snodo: authorize in your browser: {url}", file=sys.stderr, flush=True)
        return webbrowser.open(url) if open_page is None else open_page(url)

    return BrowserUserAgent(open_page=show, timeout=timeout)


def _free(port: int) -> bool:
    """Whether a listener could take ``port`` now (as the browser agent's does: a
    connection of the last sign-in still closing does not hold it)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _redirect_uri(kept: Any, port: int | None) -> str:
    """The loopback redirect URI to sign in with: the given port's, else the one the kept
    registration names while its port is free, else a new free port's."""
    if port is None:
        kept_uri = kept.redirect_uri
        kept_port = urlsplit(kept_uri).port if kept_uri else None
        if kept_uri and kept_port and _free(kept_port):
            return str(kept_uri)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
    uri = f"http://127.0.0.1:{port}/callback"
    kept.keep_redirect_uri(uri)
    return uri


def kept_auth(
    url: str,
    *,
    browser: bool,
    open_page: Any = None,
    client_id: str | None = None,
    redirect_port: int | None = None,
    timeout: float = 300.0,
) -> Any:
    """The ``OAuth`` of the sign-in kept for ``url``: its tokens sent and refreshed, and,
    with ``browser``, a sign-in in the browser when none is kept (or it expired)."""
    try:
        from snodo.oauth import KeptTokens, OAuth  # snodo[auth]: on demand
    except ModuleNotFoundError as exc:
        raise ValueError(
            "signing in needs the snodo[auth] extra: pip install 'snodo[auth]'"
        ) from exc
    kept = KeptTokens(url)
    if browser:
        redirect_uri = _redirect_uri(kept, redirect_port)
        user_agent: Any = browser_agent(open_page, timeout)
    else:
        redirect_uri = kept.redirect_uri or "http://127.0.0.1/callback"
        user_agent = NotSignedIn(url)
    return OAuth(
        user_agent=user_agent,
        storage=kept,
        lock=kept.locked,
        redirect_uri=redirect_uri,
        client_name="snodo",
        client_id=client_id,
    )


def is_kept(url: str) -> bool:
    """Whether a sign-in is kept for ``url`` (False without the auth extra)."""
    try:
        from snodo.oauth import KeptTokens
    except ModuleNotFoundError:
        return False
    return bool(KeptTokens(url).exists())


def main(args: argparse.Namespace) -> int:
    """Run ``snodo auth ...``; the exit status."""
    from snodo.client import ClientError

    try:
        from snodo.oauth import OAuthError
    except ModuleNotFoundError:
        print(f"snodo: {NEEDS_AUTH}", file=sys.stderr)
        return 1
    try:
        return asyncio.run(_main(args))
    except OAuthError as exc:
        print(f"snodo: {sign_in_failed(args.url, exc)}", file=sys.stderr)
        return 1
    except (ClientError, ValueError, OSError) as exc:
        shown = f"{type(exc).__name__}: {exc}" if isinstance(exc, ClientError) else str(exc)
        if isinstance(exc, ClientError):
            shown = unanswered(args.url, exc) or shown
        print(f"snodo: {shown}", file=sys.stderr)
        return 1


def sign_in_failed(url: str, exc: Exception) -> str:
    """A sign-in that failed, in one line, with what to do where it is known."""
    said = str(exc)
    if said.startswith("no protected resource metadata"):
        return (
            f"{url} asks for credentials but names no authorization server to sign in at"
            " (no OAuth protected resource metadata): give a bearer token (--auth-file"
            " PATH or SNODO_AUTH_TOKEN)"
        )
    return f"signing in to {url} failed: {said}"


def _checked_url(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{url!r} is not an http(s) URL: sign-ins are for HTTP servers")
    return url


async def _main(args: argparse.Namespace) -> int:
    from snodo.oauth import KeptTokens, OAuth, OAuthError
    from snodo.oauth.kept import kept_servers

    if args.auth_command == "list":
        for server in kept_servers():
            print(server)
        return 0
    if args.auth_command == "logout":
        if args.all == (args.url is not None):
            raise ValueError("give the URL to sign out of, or --all")
        servers = kept_servers() if args.all else [_checked_url(args.url)]
        for server in servers:
            gone = KeptTokens(server).forget()
            print(
                f"snodo: {'signed out of' if gone else 'not signed in to'} {server}",
                file=sys.stderr,
            )
        return 0
    url = _checked_url(args.url)
    if args.auth_command == "token":
        kept = KeptTokens(url)
        if not kept.exists():
            raise ValueError(f"not signed in to {url}: snodo auth login {url}")
        oauth = OAuth(storage=kept, lock=kept.locked, user_agent=NotSignedIn(url))
        try:
            tokens = await oauth.fresh_tokens(url)
        except OAuthError as exc:
            raise ValueError(f"{exc}: snodo auth login {url}") from None
        print(tokens.access_token)
        return 0
    return await _login(args, url)


async def _login(args: argparse.Namespace, url: str) -> int:
    """A new sign-in, in place of what was kept for ``url`` (a failed one leaves none:
    another login is what it calls for); the registration kept is used again."""
    from snodo.client import Client
    from snodo.oauth import KeptTokens

    kept = KeptTokens(url)
    await kept.set_tokens(None)
    if args.client_id is not None:  # the client named, not one registered earlier
        kept.forget_registrations()
    oauth = kept_auth(
        url,
        browser=True,
        client_id=args.client_id,
        redirect_port=args.redirect_port,
        timeout=args.timeout,
    )
    async with Client.http(url, auth=oauth, deadline=args.timeout) as client:
        await client.discover()  # a request the server answers only once signed in
    if not kept.exists():
        raise ValueError(f"{url} asked for no sign-in: nothing was kept")
    with contextlib.suppress(OSError):
        kept.path.chmod(0o600)
    print(f"snodo: signed in to {kept.server}; the tokens are kept in {kept.path}", file=sys.stderr)
    return 0
