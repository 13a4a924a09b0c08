"""A tool that runs as a task, seen on the wire: python tasks_server.py

The server stores the task and answers at once; the work goes on in the background and
the client polls tasks/get until it is done. Each message here is the literal JSON a
client would send, handed to the server's core.
"""

import asyncio
import json
from typing import Any

from snodo import Context, Server
from snodo.extensions.tasks import MemoryTaskStore, Tasks, background
from snodo_wire.protocol import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, REVISION
from snodo_wire_tasks.protocol import EXTENSION_ID

# One store for every worker: MemoryTaskStore for one process, SQLite for one host,
# Redis across hosts (snodo.extensions.tasks.task_store("redis://...")).
server = Server("reports", "1.0.0", extensions=[Tasks(MemoryTaskStore(), poll_interval_ms=50)])


@server.tool(task="optional")  # "required": only clients that declare tasks may call it
def report(ctx: Context, year: int) -> object:
    """Build the yearly report; it takes a while."""

    async def work(ctx: Context) -> str:
        await asyncio.sleep(0.2)  # the long job; cancellation stops it at an await
        return f"report {year}: 12 months, all green"

    return background(work)


def message(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    meta = {
        META_PROTOCOL_VERSION: REVISION,
        META_CLIENT_CAPABILITIES: {"extensions": {EXTENSION_ID: {}}},  # tasks declared
    }
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta}}


async def main() -> None:
    call = message(1, "tools/call", {"name": "report", "arguments": {"year": 2026}})
    created = (await server.handle(call)).response
    assert created is not None
    task = created["result"]
    print(task["resultType"], task["status"])
    while True:
        await asyncio.sleep(task.get("pollIntervalMs", 50) / 1000)
        polled = await server.handle(message(2, "tasks/get", {"taskId": task["taskId"]}))
        assert polled.response is not None
        task = polled.response["result"]
        if task["status"] not in ("working", "input_required"):
            break
    print(task["status"], json.dumps(task["result"]["content"]))


if __name__ == "__main__":
    asyncio.run(main())
