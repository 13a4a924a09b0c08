"""A destructive tool that asks before it acts: python confirm.py

The server pins each question it asks into the request state, so an answer counts only
when this flow asked that very question. A client that sends a confirmation with its
first request, before anyone was asked, deletes nothing.
"""

import asyncio
from typing import Any

from snodo import MISSING, Client, Context, Server, elicitation, input_required
from snodo.client.transports import MemoryTransport

server = Server("notes", "1.0.0")
NOTES = {"groceries": "milk, eggs", "plans": "world domination"}


def confirmation(name: str) -> dict[str, Any]:
    """The question, built the same way on every round (so it is the same question)."""
    return elicitation.form(
        f"Delete the note {name!r}? This cannot be undone.",
        {
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Delete it"}},
            "required": ["confirm"],
        },
    )


@server.tool
def delete_note(ctx: Context, name: str) -> object:
    """Delete a note, once the user confirms."""
    if name not in NOTES:
        return f"No note {name!r}."
    answer = elicitation.response(ctx, "confirm", confirmation(name))
    if answer is MISSING:
        return input_required({"confirm": confirmation(name)})
    if isinstance(answer, elicitation.Accepted) and answer.content["confirm"] is True:
        del NOTES[name]
        return f"Deleted {name!r}."
    return f"Kept {name!r}."


async def main() -> None:
    transport = MemoryTransport(server)
    # A client that pre-answers the confirmation in its first request: the server asks.
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    first = await transport.request(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "delete_note",
                "arguments": {"name": "plans"},
                "inputResponses": yes,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
                },
            },
        },
        {},
        lambda notification: None,
    )
    print("pre-answered:", first["result"]["resultType"], sorted(NOTES))

    async def user(params: dict[str, Any]) -> dict[str, Any]:
        print("asked:", params["message"])
        return {"action": "accept", "content": {"confirm": "plans" in params["message"]}}

    async with Client(transport, elicitation=user) as client:
        for name in ("plans", "groceries"):
            print((await client.call_tool("delete_note", {"name": name})).content[0].text)
    print("left:", sorted(NOTES))


if __name__ == "__main__":
    asyncio.run(main())
