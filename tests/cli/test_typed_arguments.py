"""``key=value`` converted by the tool's input schema: a string field keeps ``1`` as the
string "1" (it was sent as the number 1 and refused), numbers, booleans, lists, enums
and null where the schema says so, through ``anyOf`` and ``$ref`` too; a prompt's
arguments stay strings."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from snodo.cli.client_commands import typed_value
from tests.support.processes import snodo

TARGET = "tests/cli/typed_server.py:server"


def call(*argv: str) -> subprocess.CompletedProcess[str]:
    return snodo("call", TARGET, "store", *argv)


def test_each_value_as_the_schema_says() -> None:
    done = call(
        "folder=1",
        "count=2",
        "ratio=3",
        "pinned=true",
        'tags=["a","b"]',
        "label=null",
        "colour=blue",
        "size=2",
        "anything=5",
    )
    assert done.returncode == 0, done.stderr
    received = json.loads(done.stdout)
    assert received == {
        "folder": ["1", "str"],
        "count": [2, "int"],
        "ratio": [3.0, "float"],
        "pinned": [True, "bool"],
        "tags": [["a", "b"], "list"],
        "label": ["null", "str"],  # a string field: the text itself
        "colour": ["blue", "str"],
        "size": [2, "int"],
        "anything": ["5", "str"],  # nothing said of its type: a string
    }


def test_a_value_the_schema_cannot_take_is_one_line() -> None:
    done = call("folder=x", "count=two")
    assert done.returncode == 1
    assert done.stderr.strip() == "snodo: count='two': count takes integer"


SCHEMA: dict[str, Any] = {
    "$defs": {"Level": {"enum": [1, 2, 3]}},
    "properties": {
        "name": {"type": "string"},
        "either": {"type": ["integer", "string"]},
        "maybe": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
        "level": {"$ref": "#/$defs/Level"},
        "shape": {"type": "object"},
    },
}


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("name", "1", "1"),
        ("name", "true", "true"),
        ("either", "7", 7),
        ("either", "seven", "seven"),
        ("maybe", "false", False),
        ("maybe", "null", None),
        ("level", "3", 3),
        ("shape", '{"a": 1}', {"a": 1}),
        ("unknown", "1", "1"),
    ],
)
def test_typed_value(key: str, value: str, expected: Any) -> None:
    typed = typed_value(key, value, SCHEMA["properties"].get(key), SCHEMA)
    assert typed == expected and type(typed) is type(expected)


def test_a_value_of_no_allowed_type_is_refused() -> None:
    with pytest.raises(ValueError, match="shape takes object"):
        typed_value("shape", "[1]", SCHEMA["properties"]["shape"], SCHEMA)
    with pytest.raises(ValueError, match="maybe takes boolean or null"):
        typed_value("maybe", "yes", SCHEMA["properties"]["maybe"], SCHEMA)


def listing(target: str, *options: str) -> subprocess.CompletedProcess[str]:
    return snodo("list", target, *options)


def test_list_shows_each_tools_arguments() -> None:
    """Name, type and whether it is required (no ``?``); the wire model of the schema
    was read as nothing before, so every tool showed ``()``."""
    done = listing(TARGET)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == (
        "  store(folder: string, count: integer, ratio?: number, pinned?: boolean,"
        " tags?: array|null, label?: string|null, colour?: red|blue, size?: 1|2,"
        " anything?: any)  Echo the arguments with their Python types."
    )
    assert "extensions" not in done.stdout  # the server declares none


def test_list_shows_the_extensions_a_server_declares() -> None:
    done = listing("examples/apps.py:server")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("extensions (1)\n  io.modelcontextprotocol/ui")
    raw = listing("examples/apps.py:server", "--output", "json")
    assert json.loads(raw.stdout)["extensions"] == {"io.modelcontextprotocol/ui": {}}
