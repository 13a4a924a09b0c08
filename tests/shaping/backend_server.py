"""The server the shaping tests put behind a gateway: ``snodo run
tests/shaping/backend_server.py:server`` serves it, and the in-process tests import it."""

from __future__ import annotations

from snodo.core.context import Context
from snodo.server import Server

server = Server("backend", "1.0.0")


@server.tool(inline=True)
def search(query: str, limit: int = 10, tenant: str = "none") -> str:
    """Search the catalog."""
    return f"{limit} results for {query!r} in {tenant}"


@server.tool(inline=True)
def admin_reset(confirm: bool) -> str:
    """Reset everything."""
    return "reset"


@server.tool(inline=True)
def admin_audit() -> str:
    """Read the audit log."""
    return "audited"


@server.tool(inline=True)
def whoami(ctx: Context) -> str:
    return ctx.principal or "anonymous"


@server.prompt(inline=True)
def summarize(text: str) -> str:
    """Summarize a text."""
    return f"Summarize: {text}"


@server.resource("docs://public", inline=True)
def public() -> str:
    return "public"


@server.resource("secret://keys", inline=True)
def keys() -> str:
    return "s3cret"


@server.resource_template("docs://{page}", inline=True)
def page(page: str) -> str:
    return f"page {page}"


@server.completion("ref/prompt", "summarize")
def texts(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [f"{value}-one", f"{value}-two"]
