"""URL elicitation required (-32042, 2025-11-25 client/elicitation.mdx), both sides.

The client against the official SDK's legacy server (mcp 1.30.0, tests/client/
legacy_server.py), which raises URLElicitationRequiredError and sends
notifications/elicitation/complete once the sign-in is done: shown to the URL handler,
waited for, retried once; declined, unhandled or never completed, the typed error.
The server: ``url_required`` answers a legacy session with -32042 and a 2026-07-28
client with an InputRequiredResult of the same URLs, and the handler runs afresh.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from snodo.cli import load
from snodo.client import Client, RequestError, UrlElicitationRequired
from snodo.client.transports import MemoryTransport
from tests.client.test_dual_era import LEGACY, serve_http
from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.processes import serving, snodo_run

accounts = itertools.count()


@pytest.fixture(scope="module")
def legacy_url() -> Iterator[str]:
    yield from serve_http([str(legacy_sdk_python()), str(LEGACY)])


def legacy_clients(url: str, **options: Any) -> list[Client]:
    stdio = [str(legacy_sdk_python()), str(LEGACY), "stdio"]
    return [Client.http(url, **options), Client.stdio(stdio, **options)]


def test_the_client_shows_the_urls_waits_for_completion_and_retries(legacy_url: str) -> None:
    shown: list[dict[str, Any]] = []

    def visit(params: dict[str, Any]) -> dict[str, Any]:
        shown.append(params)
        return {"action": "accept"}

    async def main() -> None:
        for client in legacy_clients(legacy_url, url_elicitation=visit, deadline=20):
            async with client:
                account = f"acct{next(accounts)}"
                result = await client.call_tool("connect_account", {"account": account})
                assert client.era == "legacy"
                assert result.content[0].text == f"{account} connected"
                assert shown[-1]["elicitationId"] == f"sign-in-{account}"
                assert shown[-1]["url"].startswith("https://accounts.example.com/sign-in")
                assert not client.completions.waiting

    asyncio.run(main())
    assert len(shown) == 2


def test_declined_or_unhandled_the_error_carries_the_urls(legacy_url: str) -> None:
    async def main() -> None:
        for options in ({}, {"url_elicitation": lambda p: {"action": "decline"}}):
            async with Client.http(legacy_url, **options) as client:
                with pytest.raises(UrlElicitationRequired) as raised:
                    await client.call_tool("connect_account", {"account": f"a{next(accounts)}"})
                assert raised.value.code == -32042
                [wanted] = raised.value.elicitations
                assert wanted["mode"] == "url" and wanted["elicitationId"].startswith("sign-in-")

    asyncio.run(main())


def test_no_completion_within_the_deadline_is_the_error(legacy_url: str) -> None:
    async def main() -> None:
        visit = {"url_elicitation": lambda p: {"action": "accept"}}
        async with Client.http(legacy_url, deadline=0.3, **visit) as client:
            with pytest.raises(UrlElicitationRequired):
                await client.call_tool("connect_account", {"account": f"a{next(accounts)}"})
            assert not client.completions.waiting

    asyncio.run(main())


SIGN_IN = "docs/examples/sign_in.py:server"


def test_url_required_to_a_modern_client_is_an_input_required_round() -> None:
    sign_in = SimpleNamespace(server=load(SIGN_IN))

    async def main() -> dict[str, Any]:
        async with Client(MemoryTransport(sign_in.server), era="modern") as client:
            return await client.request(
                "tools/call",
                {"name": "files", "arguments": {"account": "grace"}},
            )

    async def capable() -> dict[str, Any]:
        client = Client(
            MemoryTransport(sign_in.server), url_elicitation=lambda p: {"action": "decline"}
        )
        async with client:
            flow = await client.call_tool("files", {"account": "grace"}, manual=True)
            return flow.result.model_dump(mode="json", by_alias=True, exclude_none=True)

    with pytest.raises(RequestError) as refused:
        asyncio.run(main())  # a client that cannot open URLs: -32021, as for any URL ask
    assert refused.value.code == -32021
    result = asyncio.run(capable())
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {
        "url-1": {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "Sign in to grace's drive",
                "url": "https://drive.example.com/sign-in?account=grace",
            },
        }
    }
    assert result["_meta"]["snodo/urlRequired"] is True


def test_url_required_is_minus_32042_to_a_legacy_session() -> None:
    """Raw HTTP as a 2025-11-25 client: initialize declaring URL elicitation, then the
    call answered with the revision's error; and snodo's client in the legacy era, which
    shows the page and, with no completion from this server, raises in time."""
    version = "2025-11-25"
    with serving(lambda port: snodo_run(SIGN_IN, "http", "--port", str(port))) as server:
        url = f"{server.base}/mcp"
        headers = {"accept": "application/json, text/event-stream"}
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {"elicitation": {"url": {}}},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        with httpx.Client(timeout=10) as http:
            opened = http.post(url, json=init, headers=headers)
            session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = version
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert http.post(url, json=note, headers=session).status_code == 202
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "files", "arguments": {"account": "ada"}},
            }
            answer = http.post(url, json=call, headers=session)
        body = (
            answer.json()
            if answer.headers["content-type"].startswith("application/json")
            else (json.loads(answer.text.split("data: ", 1)[1].split("\n", 1)[0]))
        )
        error = body["error"]
        assert error["code"] == -32042
        [wanted] = error["data"]["elicitations"]
        assert wanted["mode"] == "url" and wanted["url"].endswith("account=ada")
        assert isinstance(wanted["elicitationId"], str) and len(wanted["elicitationId"]) >= 16

        async def legacy() -> None:
            shown: list[str] = []
            options: dict[str, Any] = {"era": "legacy", "deadline": 1}
            client = Client.http(
                url,
                url_elicitation=lambda p: shown.append(p["url"]) or {"action": "accept"},
                **options,
            )
            async with client:
                with pytest.raises(UrlElicitationRequired):
                    await client.call_tool("files", {"account": "ada"})
            assert shown == ["https://drive.example.com/sign-in?account=ada"]

        asyncio.run(legacy())
