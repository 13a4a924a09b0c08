"""A legacy-only server (2025-11-25 and earlier) built on the official SDK's mcp 1.30.0.

    .venv-mcp1/bin/python tests/client/legacy_server.py stdio
    .venv-mcp1/bin/python tests/client/legacy_server.py http PORT

It knows nothing of 2026-07-28: a snodo Client must find that out and open a session.
Its tools, resource and prompt ask the client things mid-call (elicitation, sampling,
roots, ping) and send notifications (log, progress), so every server-to-client path of
a legacy session is exercised. Runs only under the interpreter of tests/support/legacy_sdk.py.
"""

from __future__ import annotations

import asyncio
import sys

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import (
    Completion,
    CompletionArgument,
    ElicitRequestURLParams,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
)
from pydantic import AnyUrl, BaseModel

mcp = FastMCP("legacy-fixture", instructions="A server of the initialize era.")


class City(BaseModel):
    city: str


class Consent(BaseModel):
    confirmed: bool


@mcp.tool()
async def forecast(days: int, ctx: Context) -> str:
    """Asks which city (form elicitation), then answers."""
    answer = await ctx.elicit("Which city?", City)
    if answer.action != "accept":
        return f"no forecast ({answer.action})"
    return f"{answer.data.city}: sunny for {days} days"


@mcp.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model (sampling)."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=text))],
        max_tokens=20,
    )
    content = result.content
    return f"model said: {content.text}" if isinstance(content, TextContent) else "?"


@mcp.tool()
async def count_roots(ctx: Context) -> str:
    """Asks the client for its roots."""
    roots = await ctx.session.list_roots()
    return ",".join(str(root.uri) for root in roots.roots)


@mcp.tool()
async def chatty(ctx: Context) -> str:
    """Logs, reports progress and pings the client before answering."""
    await ctx.info("working on it")
    await ctx.report_progress(1, 2)
    await ctx.session.send_ping()
    return "done"


@mcp.tool()
async def slow(seconds: float) -> str:
    """Takes its time (for deadlines and cancellation)."""
    await anyio.sleep(seconds)
    return "finally"


CONNECTED: set[str] = set()
RUNNING: set[asyncio.Task[None]] = set()


@mcp.tool()
async def connect_account(account: str, ctx: Context) -> str:
    """Needs the user to sign in at a URL first (URLElicitationRequiredError, -32042).
    The sign-in completes by itself half a second later, and the server says so with
    notifications/elicitation/complete."""
    if account in CONNECTED:
        return f"{account} connected"
    elicitation_id = f"sign-in-{account}"
    session = ctx.session

    async def signed_in() -> None:
        await anyio.sleep(0.5)
        CONNECTED.add(account)
        await session.send_elicit_complete(elicitation_id)

    RUNNING.add(asyncio.get_running_loop().create_task(signed_in()))
    raise UrlElicitationRequiredError(
        [
            ElicitRequestURLParams(
                mode="url",
                message=f"Sign in to connect {account}",
                url=f"https://accounts.example.com/sign-in?account={account}",
                elicitationId=elicitation_id,
            )
        ]
    )


SUBSCRIBED: set[str] = set()


@mcp._mcp_server.subscribe_resource()
async def subscribe(uri: AnyUrl) -> None:
    SUBSCRIBED.add(str(uri))


@mcp._mcp_server.unsubscribe_resource()
async def unsubscribe(uri: AnyUrl) -> None:
    SUBSCRIBED.discard(str(uri))


@mcp.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Says the tool list changed, and ``uri`` too when someone subscribed to it;
    answers with the URIs subscribed to."""
    await ctx.session.send_tool_list_changed()
    if uri in SUBSCRIBED:
        await ctx.session.send_resource_updated(AnyUrl(uri))
    return ",".join(sorted(SUBSCRIBED))


@mcp.resource("note://{name}")
async def note(name: str, ctx: Context) -> str:
    """A resource that asks for consent before it shows itself."""
    answer = await ctx.elicit(f"Show note {name}?", Consent)
    if answer.action == "accept" and answer.data.confirmed:
        return f"note {name}: the key is under the mat"
    return "hidden"


@mcp.resource("static://hello")
def hello() -> str:
    return "hello from the past"


@mcp.prompt()
def greet(name: str) -> str:
    """A greeting."""
    return f"Say hello to {name}."


@mcp.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: object,
) -> Completion | None:
    names = ["alice", "alfred", "bob"]
    return Completion(values=[n for n in names if n.startswith(argument.value)])


if __name__ == "__main__":
    if sys.argv[1] == "http":
        mcp.settings.host = "127.0.0.1"
        mcp.settings.port = int(sys.argv[2])
        mcp.settings.log_level = "WARNING"
        mcp.run("streamable-http")
    else:
        mcp.run("stdio")
