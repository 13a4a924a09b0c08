"""The confirmation example (docs/examples/confirm.py) driven by a client we did not write
and by our own. With the official Python SDK's client (mcp 2.3.0, modern era, HTTP), a
confirmation it sends with its first call, before the server asked, counts for nothing:
the server asks, and the user's own answer decides."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.processes import serving, snodo_run

mcp_client = pytest.importorskip("mcp.client")
types = pytest.importorskip("mcp_types")

TARGET = "docs/examples/confirm.py:server"


def _text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("user_says", [False, True])
def test_a_pre_answered_confirmation_is_asked_again(user_says: bool) -> None:
    asked: list[str] = []

    async def user(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": user_says})

    async def scenario(url: str) -> tuple[str, str]:
        async with mcp_client.Client(url, mode="2026-07-28", elicitation_callback=user) as client:
            pre_answered = types.ElicitResult(action="accept", content={"confirm": True})
            deleted = await client.call_tool(
                "delete_note", {"name": "plans"}, input_responses={"confirm": pre_answered}
            )
            again = await client.call_tool("delete_note", {"name": "plans"})
            return _text(deleted), _text(again)

    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        first, second = asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 30))
    question = "Delete the note 'plans'? This cannot be undone."
    if user_says:
        assert (first, second) == ("Deleted 'plans'.", "No note 'plans'.")
        assert asked == [question]
    else:  # the pre-answered "yes" was not taken: the user was asked, and said no
        assert (first, second) == ("Kept 'plans'.", "Kept 'plans'.")
        assert asked == [question, question]


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_snodos_client_in_either_era_is_asked_and_its_answer_decides(
    transport: str, era: str
) -> None:
    """The same example through snodo's own client, both transports and both eras (a
    legacy session gets the question as a request of the server's, through the bridge)."""
    from snodo import Client

    asked: list[str] = []

    async def user(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirm": "groceries" in params["message"]}}

    async def scenario(client: Client) -> list[str]:
        async with client:
            texts = []
            for name in ("plans", "groceries"):
                texts.append(_text(await client.call_tool("delete_note", {"name": name})))
            assert client.era == era
            return texts

    if transport == "stdio":
        command = snodo_run(TARGET, "stdio")
        texts = asyncio.run(scenario(Client.stdio(command, era=era, elicitation=user)))
    else:
        with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
            client = Client.http(f"{server.base}/mcp", era=era, elicitation=user)
            texts = asyncio.run(asyncio.wait_for(scenario(client), 30))
    assert texts == ["Kept 'plans'.", "Deleted 'groceries'."]
    assert len(asked) == 2
