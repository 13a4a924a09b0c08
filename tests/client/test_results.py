"""What the client's typed results read like: pydantic's one MISSING for a field left out,
untouched by snodo; the specification's stated default where it states one; the same in
both eras."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import subprocess
import sys
from typing import Any

import pydantic
import pytest

import snodo
from snodo import MISSING, Client
from snodo.client.results import SPEC_DEFAULTS
from snodo_wire import CallToolResult, Tool
from tests.support.paths import schema_dir
from tests.support.processes import serving, snodo_run

TARGET = "tests/client/results_server.py:server"


def test_missing_is_the_models_own_sentinel() -> None:
    assert snodo.MISSING is pydantic.MISSING
    assert repr(MISSING) == "MISSING"
    assert copy.deepcopy(MISSING) is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING
    bare = {"resultType": "complete", "content": []}
    result = CallToolResult.model_validate(bare)
    assert result.structured_content is MISSING
    assert result.model_dump(by_alias=True) == bare  # absent stays absent
    said = {**bare, "isError": False}
    assert CallToolResult.model_validate(said).model_dump(by_alias=True) == said


IMPORTS_SNODO = """
import pydantic, typing_extensions
before = (type(pydantic.MISSING), bool(pydantic.MISSING), dict(vars(type(pydantic.MISSING))))
import snodo, snodo.client, snodo.server, snodo.transports, snodo.gateway
after = (type(pydantic.MISSING), bool(pydantic.MISSING), dict(vars(type(pydantic.MISSING))))
assert after == before, (before, after)
assert type(pydantic.MISSING) is typing_extensions.Sentinel
print(before[1])
"""


def test_importing_snodo_leaves_pydantic_missing_as_it_was() -> None:
    """snodo patches no third-party object: in a fresh interpreter, MISSING's class and
    truth are the same before and after snodo is imported."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_SNODO],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"  # as pydantic makes it


def test_each_default_filled_in_is_one_the_pinned_schema_states() -> None:
    definitions = json.loads((schema_dir() / "schema.json").read_text())["$defs"]
    for definition, defaults in SPEC_DEFAULTS.items():
        for field, value in defaults.items():
            words = definitions[definition]["properties"][field]["description"]
            stated = f"Default: {json.dumps(value)}" in words or (
                value is False and "assumed to be false" in words
            )
            assert stated, f"{definition}.{field}: {words!r}"


async def _read(client: Client) -> dict[str, Any]:
    async with client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        return {
            "era": client.era,
            "tools": tools,
            "echo": await client.call_tool("echo", {"text": "hi"}),
            "add": await client.call_tool("add", {"a": 1, "b": 2}),
            "fail": await client.call_tool("fail"),
        }


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_results_read_naturally_in_both_eras(transport: str, era: str) -> None:
    if transport == "stdio":
        seen = asyncio.run(_read(Client.stdio(snodo_run(TARGET, "stdio"), era=era)))
    else:
        with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
            client = Client.http(f"{server.base}/mcp", era=era)
            seen = asyncio.run(asyncio.wait_for(_read(client), 30))
    assert seen["era"] == era
    echo, add, fail = seen["echo"], seen["add"], seen["fail"]
    tools: dict[str, Tool] = seen["tools"]
    assert echo.is_error is False and not echo.is_error  # the spec's default
    assert echo.structured_content is MISSING
    assert add.structured_content == {"total": 3} and not add.is_error
    assert fail.is_error is True
    assert tools["echo"].output_schema is MISSING
    assert tools["add"].output_schema is not MISSING
    assert tools["echo"].annotations is MISSING  # no annotations at all
    hints = tools["add"].annotations
    assert hints is not MISSING
    assert (hints.read_only_hint, hints.destructive_hint) == (True, True)
    assert (hints.idempotent_hint, hints.open_world_hint) == (False, True)
