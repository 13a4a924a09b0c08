"""A first server and a client talking to it in one process: python hello.py

The server's one tool asks the user for their name in the middle of the call (a form)
and greets them on the retry. The client answers the form as a user would. Serve the
same server to other clients with `snodo run hello.py:server`.
"""

import asyncio
import secrets
from typing import Annotated, Any

from snodo import Ask, Client, Server, elicitation
from snodo.client.transports import MemoryTransport

# Signs the state a flow carries between rounds. One process may make its own; a
# server with several workers reads one shared secret from its configuration.
server = Server("hello", "1.0.0", state_secret=secrets.token_bytes(32))

NAME = elicitation.form(
    "What should I call you?",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)


@server.tool
def greet(name: Annotated[str | None, Ask(NAME, pick="name")], greeting: str = "Hello") -> str:
    """Greet the user by name, asking for it first."""
    if name is None:  # the user declined, or dismissed the form
        return f"{greeting}, whoever you are."
    return f"{greeting}, {name}!"


def user(params: dict[str, Any]) -> dict[str, Any]:
    """What the user does with a form: a real client shows params["message"]."""
    print("asked:", params["message"])
    return {"action": "accept", "content": {"name": "Ada"}}


async def main() -> None:
    async with Client(MemoryTransport(server), elicitation=user) as client:
        print([tool.name for tool in await client.list_tools()])
        result = await client.call_tool("greet", {"greeting": "Hi"})
        print(result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
