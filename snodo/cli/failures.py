"""What an HTTP server that answered no MCP at all means, in one line naming the fix:
a redirect, a path nothing is served at, nothing listening. ``snodo list``, ``call``
and ``auth`` say it so."""

from __future__ import annotations

from urllib.parse import urljoin

from snodo.client import ClientError, TransportError, UnsupportedServer

__all__ = ["unanswered"]


def unanswered(url: str, exc: ClientError) -> str | None:
    """What an HTTP server that answered no MCP at all means, and what to do: a
    redirect, a path nothing is served at, no server listening. None for the rest."""
    if isinstance(exc, UnsupportedServer) and exc.status is not None:
        if 300 <= exc.status < 400:
            where = urljoin(url, exc.location) if exc.location else "elsewhere"
            return (
                f"{url} redirects to {where} (HTTP {exc.status}): call that URL (an MCP"
                " client does not follow redirects)"
            )
        if exc.status in (404, 405):
            return (
                f"nothing answers MCP at {url} (HTTP {exc.status}): check the endpoint's"
                " path (snodo run serves /mcp; a mounted app, the mount's path)"
            )
    said = str(exc)  # snodo's own HTTP/1.1, or httpx's (with OAuth)
    if type(exc) is TransportError and said.startswith(("ConnectionRefusedError", "ConnectError")):
        return f"nothing listens at {url} (connection refused): start the server, or check the port"
    return None
