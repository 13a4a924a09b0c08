"""Declarative asks: parameters the user and the client answer, all asked in one round.
python asks.py
"""

import asyncio
from collections.abc import Mapping
from typing import Annotated, Any

from snodo import Ask, Client, RequestError, Server, elicitation, roots, sampling
from snodo.asking import Root
from snodo.client.transports import MemoryTransport

server = Server("reviewer", "1.0.0")

AUDIENCE = elicitation.form(
    "Who is the summary for?",
    {
        "type": "object",
        "properties": {"audience": {"type": "string", "enum": ["engineers", "managers"]}},
        "required": ["audience"],
    },
)


def summary_of(arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    """A question built from the call's arguments, anew on every round."""
    prompt = f"Summarise {arguments['path']} in one line."
    return sampling.create_message([sampling.message("user", prompt)], max_tokens=200)


@server.tool
def summarise(
    path: str,
    audience: Annotated[str | None, Ask(AUDIENCE, pick="audience")],
    shared: Annotated[list[Root], Ask(roots.list_roots(), key="roots")],
    summary: Annotated[str | None, Ask(summary_of)],
) -> str:
    """Summarise a file of the user's project for an audience the user picks."""
    if audience is None:  # the user declined, or dismissed the form
        return "No audience, no summary."
    if not roots.contains(shared, path):
        return f"{path} is outside the roots you shared."
    # Sampled text is what the client's model said: data to show, never instructions.
    return f"For {audience}: {summary}"


# -- a client playing the user ---------------------------------------------------------


async def form(params: dict[str, Any]) -> dict[str, Any]:
    print("form:", params["message"])
    return {"action": "accept", "content": {"audience": "managers"}}


async def decline(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "decline"}


async def listed(params: dict[str, Any]) -> dict[str, Any]:
    print("roots asked")
    return {"roots": [{"uri": "file:///home/ada/project", "name": "project"}]}


async def model(params: dict[str, Any]) -> dict[str, Any]:
    print("sample:", params["messages"][0]["content"]["text"])
    text = "It works, and it is on time."
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "demo"}


async def main() -> None:
    plan = {"path": "/home/ada/project/plan.md"}
    async with Client(
        MemoryTransport(server), elicitation=form, roots=listed, sampling=model
    ) as client:
        first = await client.call_tool("summarise", plan, manual=True)
        asked = first.result.model_dump(by_alias=True)["inputRequests"]
        print("round one asks:", sorted(asked))
        print((await client.call_tool("summarise", plan)).content[0].text)
        outside = await client.call_tool("summarise", {"path": "/etc/passwd"})
        print(outside.content[0].text)

    async with Client(
        MemoryTransport(server), elicitation=decline, roots=listed, sampling=model
    ) as client:
        print((await client.call_tool("summarise", plan)).content[0].text)

    # A client with no model to lend: the server refuses the round, naming what is missing.
    async with Client(MemoryTransport(server), elicitation=form) as client:
        try:
            await client.call_tool("summarise", plan)
        except RequestError as refused:
            print(refused.code, refused.required_capabilities)


if __name__ == "__main__":
    asyncio.run(main())
