"""``snodo run --transport http`` warns once at start when a handler can ask the client
(``Ask`` parameters, or a return annotation naming ``InputRequired``) and the server's
replay guard is off (``State(guard=False)``): a replayed final retry would run it again.
A server left as it is has one, and is not warned. Real processes, their stderr read
after they stopped."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, snodo_run, stop

SERVERS = '''from typing import Annotated

from snodo import Ask, Server, State, elicitation
from snodo.core.context import Context
from snodo.core.result import InputRequired, input_required

SECRET = b"\\x19" * 32
NAME = elicitation.form(
    "Your name?",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)

declared = Server("declared", "1", state=State(secret=SECRET, guard=False))


@declared.tool
def greet(name: Annotated[dict | None, Ask(NAME)]) -> str:
    """Asks with a parameter."""
    return "hello"


explicit = Server("explicit", "1", state=State(secret=SECRET, guard=False))


@explicit.prompt
def welcome(ctx: Context) -> InputRequired | str:
    """Asks by returning input_required."""
    return input_required({"name": NAME})


guarded = Server("guarded", "1", state_secret=SECRET)  # one-time state: the default
guarded.tool(greet)

quiet = Server("quiet", "1", state_secret=SECRET)


@quiet.tool
def add(a: int, b: int) -> int:
    """Asks nothing."""
    return a + b
'''
WARNING = "can ask the client, and the server's replay guard is off"


def started_and_stopped(tmp_path: Path, target: str) -> str:
    """Serve ``target`` until it accepts connections, stop it; its stderr."""
    (tmp_path / "servers.py").write_text(SERVERS)
    port = free_port()
    log = tmp_path / f"{target}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            snodo_run(f"servers.py:{target}", "http", "--port", str(port)),
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            assert accepting(process, port), log.read_text()
        finally:
            stop(process)
    return log.read_text()


@pytest.mark.parametrize(
    ("target", "named"), [("declared", "tool greet"), ("explicit", "prompt welcome")]
)
def test_an_asking_server_without_a_guard_is_warned_once(
    tmp_path: Path, target: str, named: str
) -> None:
    output = started_and_stopped(tmp_path, target)
    assert output.count(WARNING) == 1, output
    said = f"snodo: {named} {WARNING} (State(guard=False), or a keyring without a guard): a"
    assert said + " replayed final retry runs the handler again" in output


@pytest.mark.parametrize("target", ["guarded", "quiet"])
def test_a_guarded_or_a_non_asking_server_is_not(tmp_path: Path, target: str) -> None:
    output = started_and_stopped(tmp_path, target)
    assert WARNING not in output, output
