"""One client for many servers (``ClientGroup``) and many servers as one
(``snodo proxy --config``), from the ``mcpServers`` configuration hosts use: a legacy
stdio server (PyPI mcp 1.30) and snodo's example over HTTP, each in its own era."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from snodo.client import Client
from snodo.gateway import ClientGroup, servers
from snodo.gateway.group import safe_prefixes
from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.paths import ROOT
from tests.support.processes import Serving, serving, snodo_run

ANSWERS = {"theme": "dark", "language": "ja", "confirm": True, "city": "Oslo"}


def _elicit(params: dict[str, Any]) -> dict[str, Any]:
    [field] = params["requestedSchema"]["properties"]
    return {"action": "accept", "content": {field: ANSWERS[field]}}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    target = "examples/preferences.py:server"
    with serving(lambda port: snodo_run(target, "http", "--port", str(port))) as prefs:
        path = tmp_path_factory.mktemp("group") / "mcp.json"
        legacy = [str(ROOT / "tests/client/legacy_server.py"), "stdio"]
        entries = {
            "legacy_fixture": {"command": str(legacy_sdk_python()), "args": legacy},
            "prefs": {"url": f"{prefs.base}/mcp", "headers": {"x-team": "docs"}},
        }
        path.write_text(json.dumps({"mcpServers": entries}))
        yield path


def test_prefixes_are_made_safe_and_unique() -> None:
    assert safe_prefixes(["notes", "my_notes", "my notes", "my-notes", "_"]) == {
        "notes": "notes",
        "my_notes": "my-notes",
        "my notes": "my-notes-2",
        "my-notes": "my-notes-3",
        "_": "server",
    }
    with pytest.raises(ValueError, match="url, or a command"):
        servers({"mcpServers": {"x": {"cwd": "/"}}})
    with pytest.raises(ValueError, match="no servers"):
        servers({"mcpServers": {}})


def test_a_client_group_routes_each_call_to_its_server(config: Path) -> None:
    async def scenario() -> None:
        group = ClientGroup.from_config(config, elicitation=_elicit)
        async with group:
            names = [tool.name for tool in await group.list_tools()]
            assert names[:1] == ["legacy-fixture_forecast"]
            assert "prefs_preferences" in names and "prefs_greeting" in names
            forecast = await group.call_tool("legacy-fixture_forecast", {"days": 2})
            assert forecast.content[0].text == "Oslo: sunny for 2 days"  # type: ignore[union-attr]
            saved = await group.call_tool("prefs_preferences")
            assert saved.content[0].text == "Would save: theme dark, language ja."  # type: ignore[union-attr]
            assert group.clients["legacy-fixture"].era == "legacy"
            assert group.clients["prefs"].era == "modern"
            read = await group.read_resource("prefs://summary")  # unlisted yet: tried in turn
            assert read.contents[0].text == "Would save: theme dark, language ja."  # type: ignore[union-attr]
            prompts = [prompt.name for prompt in await group.list_prompts()]
            assert "prefs_preferences_prompt" in prompts and "legacy-fixture_greet" in prompts
            with pytest.raises(ValueError, match="names no server"):
                group.route("nobody_tool")

    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.fixture(scope="module")
def gateway(config: Path) -> Iterator[Serving]:
    command = [sys.executable, "-m", "snodo", "proxy", "--config", str(config)]
    with serving(lambda port: [*command, "--transport", "http", "--port", str(port)]) as proxy:
        yield proxy


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_snodo_proxy_serves_the_configuration_as_one_server(gateway: Serving, era: str) -> None:
    async def scenario(url: str) -> None:
        async with Client.http(url, era=era, elicitation=_elicit) as client:
            names = [tool.name for tool in await client.list_tools()]
            assert "legacy-fixture_forecast" in names and "prefs_preferences" in names
            forecast = await client.call_tool("legacy-fixture_forecast", {"days": 5})
            assert forecast.content[0].text == "Oslo: sunny for 5 days"  # type: ignore[union-attr]
            saved = await client.call_tool("prefs_preferences")
            assert saved.content[0].text == "Would save: theme dark, language ja."  # type: ignore[union-attr]
            read = await client.read_resource("static://hello")  # the legacy server's
            assert read.contents[0].text  # type: ignore[union-attr]
            assert client.era == era

    asyncio.run(asyncio.wait_for(scenario(f"{gateway.base}/mcp"), 60))
