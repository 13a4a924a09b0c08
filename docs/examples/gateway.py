"""A proxy in front of a server that asks, and a client that answers through it.
python gateway.py
"""

import asyncio
from typing import Any

from snodo import MISSING, Client, Context, InputRequired, Server, elicitation, input_required
from snodo.client.transports import MemoryTransport
from snodo.gateway import proxy

backend = Server("notes", "1.0.0")
TITLE = elicitation.form(
    "Title of the note?",
    {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
)


@backend.tool
def add_note(text: str, ctx: Context) -> InputRequired | str:
    """Save a note; asks for its title."""
    answer = elicitation.response(ctx, "title", TITLE)
    if answer is MISSING:
        return input_required({"title": TITLE})
    if not isinstance(answer, elicitation.Accepted):
        return "Not saved."
    return f"Saved {answer.content['title']!r}: {text}"


# The backend is reached with snodo's client: here in memory, elsewhere by URL
# (Client.http) or by starting it (Client.stdio), of either era.
gateway = proxy(lambda **options: Client(MemoryTransport(backend), **options), name="gateway")


async def main() -> None:
    def user(params: dict[str, Any]) -> dict[str, Any]:
        print("asked:", params["message"])
        return {"action": "accept", "content": {"title": "Groceries"}}

    async with Client(MemoryTransport(gateway), elicitation=user) as client:
        print("tools:", [tool.name for tool in await client.list_tools()])
        result = await client.call_tool("add_note", {"text": "milk, eggs"})
        print(result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
