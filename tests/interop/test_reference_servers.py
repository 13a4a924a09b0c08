"""``snodo list``, ``snodo call`` and the Client against the official MCP reference
servers over stdio (pinned in interop/reference_servers: server-everything,
server-filesystem, server-memory, all 2025-11-25 servers): every tool server-everything
lists to a client with every handler is called, its task-required one included (that
revision's task augmentation: created, polled, its result fetched). Skipped when the
servers are not installed (scripts/_env.sh install_reference_servers; scripts/test does).

Marked slow: each test starts the Node servers and ``snodo`` processes one after the
other (25 to 35 s a test).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from snodo.client import Client
from tests.support import processes
from tests.support.paths import ROOT

BIN = ROOT / "interop" / "reference_servers" / "node_modules" / ".bin"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (BIN / "mcp-server-everything").exists(),
        reason="the reference servers are not installed "
        "(scripts/_env.sh install_reference_servers)",
    ),
]
EVERYTHING = [str(BIN / "mcp-server-everything"), "stdio"]


def snodo(*argv: str, env: dict[str, str] | None = None, stdin: str = "") -> Any:
    return processes.snodo(*argv, env={**os.environ, **(env or {})}, input=stdin, timeout=180)


def test_list_each_reference_server(tmp_path: Path) -> None:
    memory = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    servers: list[tuple[list[str], dict[str, str], set[str]]] = [
        (EVERYTHING, {}, {"echo", "get-sum", "simulate-research-query"}),
        ([str(BIN / "mcp-server-filesystem"), str(tmp_path)], {}, {"read_text_file", "write_file"}),
        ([str(BIN / "mcp-server-memory")], memory, {"create_entities", "read_graph"}),
    ]
    for command, env, expected in servers:
        done = snodo("list", "--stdio", shlex.join(command), "--output", "json", env=env)
        assert done.returncode == 0, done.stderr
        tools = {tool["name"] for tool in json.loads(done.stdout)["tools"]}
        assert expected <= tools, tools
    text = snodo("list", "--stdio", shlex.join(EVERYTHING))
    assert "  get-sum(a: number, b: number)  Returns the sum of two numbers" in text.stdout


def test_call_each_reference_server(tmp_path: Path) -> None:
    echoed = snodo("call", "--stdio", shlex.join(EVERYTHING), "echo", "message=1")
    assert (echoed.returncode, echoed.stdout.strip()) == (0, "Echo: 1"), echoed.stderr
    summed = snodo("call", "--stdio", shlex.join(EVERYTHING), "get-sum", "a=2", "b=3")
    assert summed.returncode == 0 and "5" in summed.stdout, summed.stderr
    filesystem = shlex.join([str(BIN / "mcp-server-filesystem"), str(tmp_path)])
    note = tmp_path / "note.txt"
    wrote = snodo("call", "--stdio", filesystem, "write_file", f"path={note}", "content=12")
    assert wrote.returncode == 0, wrote.stderr
    assert note.read_text() == "12"  # a string field: the text, not the number 12
    read = snodo("call", "--stdio", filesystem, "read_text_file", f"path={note}")
    assert (read.returncode, read.stdout.strip()) == (0, "12"), read.stderr
    memory = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    server = shlex.join([str(BIN / "mcp-server-memory")])
    entity = {"name": "snodo", "entityType": "project", "observations": ["speaks MCP"]}
    created = snodo(
        "call",
        "--stdio",
        server,
        "create_entities",
        "--json",
        json.dumps({"entities": [entity]}),
        env=memory,
    )
    assert created.returncode == 0, created.stderr
    graph = snodo("call", "--stdio", server, "read_graph", "--output", "json", env=memory)
    assert graph.returncode == 0, graph.stderr
    assert "speaks MCP" in graph.stdout


def test_snodo_call_runs_the_task_required_tool() -> None:
    """A question inside the task (its status input_required) is answered on stdin."""
    plain = snodo("call", "--stdio", shlex.join(EVERYTHING), "simulate-research-query", "topic=mcp")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("# Research Report: mcp")
    asked = snodo(
        "call",
        "--stdio",
        shlex.join(EVERYTHING),
        "simulate-research-query",
        "topic=mcp",
        "ambiguous=true",
        stdin="y\n2\n",
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("# Research Report: mcp (historical)"), asked.stdout


def _value(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][0]
    kind = prop.get("type")
    return {"number": 2, "integer": 2, "boolean": False, "array": [], "object": {}}.get(
        str(kind), "hello"
    )


ARGUMENTS: dict[str, dict[str, Any]] = {
    # Its default fetches a file from the Internet: tests stay on this machine.
    "gzip-file-as-resource": {"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8="},
    "trigger-long-running-operation": {"duration": 1, "steps": 2},
    "trigger-url-elicitation": {"url": "https://example.com/consent"},  # shown, not opened
}


def _answer_form(params: dict[str, Any]) -> dict[str, Any]:
    schema = params.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    content = {name: _value(prop) for name, prop in properties.items()}
    content = {n: v for n, v in content.items() if n in (schema.get("required") or [])}
    return {"action": "accept", "content": content}


async def _every_tool(root: Path) -> dict[str, Any]:
    handlers: dict[str, Any] = {
        "elicitation": _answer_form,
        "url_elicitation": lambda params: {"action": "decline"},
        "sampling": lambda params: {
            "role": "assistant",
            "content": {"type": "text", "text": "a reply"},
            "model": "test",
        },
        "roots": lambda params: {"roots": [{"uri": root.as_uri(), "name": "root"}]},
    }
    results = {}
    async with Client.stdio(EVERYTHING, stderr=subprocess.DEVNULL, **handlers) as client:
        for tool in await client.list_tools():
            schema = tool.input_schema.model_dump(mode="json", by_alias=True, exclude_none=True)
            required = schema.get("required") or []
            arguments = {
                name: _value(prop)
                for name, prop in (schema.get("properties") or {}).items()
                if name in required
            }
            arguments.update(ARGUMENTS.get(tool.name, {}))
            results[tool.name] = await client.call_tool(tool.name, arguments)
    return results


def test_every_tool_of_server_everything(tmp_path: Path) -> None:
    results = asyncio.run(_every_tool(tmp_path))
    failed = {name: r.content for name, r in results.items() if r.is_error}
    assert failed == {}
    assert {
        "echo",
        "get-sum",
        "get-roots-list",
        "trigger-elicitation-request",
        "trigger-sampling-request",
        "simulate-research-query",
    } <= set(results)
    assert len(results) >= 17, sorted(results)
