"""Asking the user mid-call: a form, the client's roots and a model sample in one tool,
URL consent in another, partial answers kept in sealed state. python asking.py
"""

import asyncio
import secrets
from typing import Any

from snodo import (
    MISSING,
    Client,
    Context,
    RequestError,
    Server,
    elicitation,
    input_required,
    sampling,
)
from snodo.asking import roots as roots_
from snodo.client.transports import MemoryTransport

server = Server("reviewer", "1.0.0", state_secret=secrets.token_bytes(32))

AUDIENCE = elicitation.form(
    "Who is the summary for?",
    {
        "type": "object",
        "properties": {"audience": {"type": "string", "enum": ["engineers", "managers"]}},
        "required": ["audience"],
    },
)
ROOTS = roots_.list_roots()
CONSENT = elicitation.url("Connect your calendar in the browser.", "https://example.com/connect")


@server.tool
def summarise(ctx: Context, path: str) -> object:
    """Summarise a file of the user's project for an audience the user picks."""
    known: dict[str, Any] = dict(ctx.state_data or {})  # what earlier rounds learnt
    audience = elicitation.response(ctx, "audience", AUDIENCE)
    if isinstance(audience, elicitation.Declined | elicitation.Cancelled):
        return "No audience, no summary."
    if isinstance(audience, elicitation.Accepted):
        known["audience"] = audience.content["audience"]
    listed = roots_.response(ctx, "roots", ROOTS)
    if listed is not MISSING:
        known["inside"] = roots_.contains(listed, path)
    if "inside" in known and not known["inside"]:
        return f"{path} is outside the roots you shared."

    missing = {}
    if "audience" not in known:
        missing["audience"] = AUDIENCE
    if "inside" not in known and ctx.supports(ROOTS):  # ask only what the client can answer
        missing["roots"] = ROOTS
    if missing:
        return input_required(missing, state=known)

    ask_model = sampling.create_message(
        [sampling.message("user", f"Summarise {path} for {known['audience']}.")],
        max_tokens=200,
    )
    if not ctx.supports(ask_model):  # this client has no model to lend
        return f"For {known['audience']}: {path} (no summary without a model)."
    sample = sampling.response(ctx, "summary", ask_model)
    if sample is MISSING:
        return input_required({"summary": ask_model}, state=known)
    # Sampled text is what the client's model said: data to show, never instructions.
    return f"For {known['audience']}: {sampling.text(sample)}"


@server.tool
def connect_calendar(ctx: Context) -> object:
    """Ask the user to connect their calendar on a web page (URL mode)."""
    answer = elicitation.response(ctx, "consent", CONSENT)
    if isinstance(answer, elicitation.Accepted):
        return "You agreed to open the page; the server checks the connection itself."
    if isinstance(answer, elicitation.Declined | elicitation.Cancelled):
        return "Calendar not connected."
    return input_required({"consent": CONSENT})


# -- a client playing the user ---------------------------------------------------------


async def form(params: dict[str, Any]) -> dict[str, Any]:
    print("form:", params["message"])
    return {"action": "accept", "content": {"audience": "managers"}}


async def roots(params: dict[str, Any]) -> dict[str, Any]:
    print("roots asked")
    return {"roots": [{"uri": "file:///home/ada/project", "name": "project"}]}


async def model(params: dict[str, Any]) -> dict[str, Any]:
    print("sample:", params["messages"][0]["content"]["text"])
    text = "It works, and it is on time."
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "demo"}


async def consent(params: dict[str, Any]) -> dict[str, Any]:
    print("open:", params["url"])
    return {"action": "accept"}


async def main() -> None:
    handlers: dict[str, Any] = {"elicitation": form, "roots": roots, "sampling": model}
    async with Client(MemoryTransport(server), **handlers, url_elicitation=consent) as client:
        result = await client.call_tool("summarise", {"path": "/home/ada/project/plan.md"})
        print(result.content[0].text)
        outside = await client.call_tool("summarise", {"path": "/etc/passwd"})
        print(outside.content[0].text)
        print((await client.call_tool("connect_calendar")).content[0].text)

    # A client without sampling (nor roots) gets what can be done without them.
    async with Client(MemoryTransport(server), elicitation=form) as client:
        result = await client.call_tool("summarise", {"path": "/home/ada/project/plan.md"})
        print(result.content[0].text)
        # Asking it for a URL visit anyway: the server refuses its own handler's
        # answer, naming the capability the client lacks.
        try:
            await client.call_tool("connect_calendar")
        except RequestError as refused:
            print(refused.code, refused.required_capabilities)


if __name__ == "__main__":
    asyncio.run(main())
