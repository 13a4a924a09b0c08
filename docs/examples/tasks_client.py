"""The client side of tasks: python tasks_client.py

One call is followed to its result, answering the question the task asks on the way;
another is started in manual mode, carried as JSON (as through a queue), and finished
by a second client, as another process would.
"""

import asyncio
import secrets
from typing import Any

from snodo import Client, Context, Server, elicitation, input_required
from snodo.client.transports import MemoryTransport
from snodo.extensions.tasks import MemoryTaskStore, TaskHandle, Tasks, TasksClient, background

server = Server(
    "files",
    "1.0.0",
    state_secret=secrets.token_bytes(32),
    extensions=[Tasks(MemoryTaskStore(), poll_interval_ms=20)],
)
SURE = elicitation.form(
    "Delete it for good?",
    {"type": "object", "properties": {"sure": {"type": "boolean"}}, "required": ["sure"]},
)


@server.tool(task="required")
def purge(ctx: Context, filename: str) -> object:
    """Delete a file everywhere it was copied; slow, and it asks first."""

    async def work(ctx: Context) -> object:
        answer = elicitation.response(ctx, "sure", SURE)  # asked inside the task
        if isinstance(answer, elicitation.Accepted) and answer.content["sure"]:
            await asyncio.sleep(0.1)  # the long part
            return f"{filename} purged"
        if isinstance(answer, elicitation.Declined | elicitation.Cancelled):
            return f"{filename} kept"
        return input_required({"sure": SURE})

    return background(work)


def yes(params: dict[str, Any]) -> dict[str, Any]:
    """The same kind of handler MRTR uses."""
    print("asked:", params["message"])
    return {"action": "accept", "content": {"sure": True}}


async def main() -> None:
    async with Client(MemoryTransport(server), elicitation=yes, deadline=30) as client:
        TasksClient(client)  # declares tasks: the server runs the tool as one
        result = await client.call_tool("purge", {"filename": "a.txt"})  # a task, followed
        print(result.content[0].text)

    async with Client(MemoryTransport(server), elicitation=yes) as front:
        TasksClient(front)
        step = await front.call_tool("purge", {"filename": "b.txt"}, manual=True)
        assert isinstance(step, TaskHandle)
        carried = step.to_json()  # into a database or a queue
    async with Client(MemoryTransport(server), elicitation=yes) as back:
        TasksClient(back)
        result = await back.resume(TaskHandle.from_json(carried))
        print(result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
