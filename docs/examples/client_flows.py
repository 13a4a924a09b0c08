"""The client: handlers, a deadline, and a flow paused in one process and resumed in
another. python client_flows.py
"""

import asyncio
import json
import secrets
from typing import Any

from snodo import MISSING, Client, Context, Flow, Server, elicitation, input_required
from snodo.client import ClientError, DeadlineExceeded
from snodo.client.transports import MemoryTransport
from snodo_wire import InputRequiredResult

server = Server("orders", "1.0.0", state_secret=secrets.token_bytes(32))
QUANTITY = elicitation.form(
    "How many?",
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]},
)


@server.tool
def order(ctx: Context, item: str) -> object:
    """Order an item, asking how many."""
    answer = elicitation.response(ctx, "quantity", QUANTITY)
    if isinstance(answer, elicitation.Accepted):
        return f"{answer.content['n']} x {item} ordered"
    if answer is not MISSING:
        return "nothing ordered"
    return input_required({"quantity": QUANTITY})


@server.tool
async def slow() -> str:
    """Takes longer than the caller will wait."""
    await asyncio.sleep(5)
    return "done"


def three(params: dict[str, Any]) -> dict[str, Any]:
    """An elicitation handler: gets the request's params, returns the user's answer."""
    return {"action": "accept", "content": {"n": 3}}


def save(flow: Flow) -> str:
    """A paused flow as JSON, for a queue or a database."""
    result = flow.result.model_dump(mode="json", by_alias=True)
    return json.dumps({"method": flow.method, "params": flow.params, "result": result})


def load(text: str) -> Flow:
    raw = json.loads(text)
    return Flow(raw["method"], raw["params"], InputRequiredResult.model_validate(raw["result"]))


async def main() -> None:
    # Automatic: the client answers every round with its handlers and retries.
    async with Client(MemoryTransport(server), elicitation=three) as client:
        print((await client.call_tool("order", {"item": "tea"})).content[0].text)

    # Manual: the first round comes back as a Flow; store it, and let another client
    # (another process, another machine) answer it later.
    async with Client(MemoryTransport(server), elicitation=three) as front:
        flow = await front.call_tool("order", {"item": "cake"}, manual=True)
        assert isinstance(flow, Flow)
        print("asked:", list(flow.result.model_dump(by_alias=True)["inputRequests"]))
        stored = save(flow)
    async with Client(MemoryTransport(server), elicitation=three) as back:
        answer = {"quantity": {"action": "accept", "content": {"n": 2}}}
        print((await back.resume(load(stored), answer)).content[0].text)

    # A deadline bounds a whole call, every round of it; errors share one base class.
    async with Client(MemoryTransport(server), deadline=0.2) as hurried:
        try:
            await hurried.call_tool("slow")
        except DeadlineExceeded as late:
            print("deadline:", isinstance(late, ClientError))


if __name__ == "__main__":
    asyncio.run(main())
