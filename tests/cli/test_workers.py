"""``snodo run --workers N`` and legacy sessions: kept in each worker's memory they break
(a client's next request lands on a worker that does not know its session), so the
parent refuses before any worker starts, naming the ways out; shared, stateless,
modern-only or opted out, it serves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT

SERVERS = """from snodo import Server
from snodo.server.legacy_limits import LegacyLimits

default = Server("default", "1")
memory = Server("memory", "1", legacy=LegacyLimits(store="memory:"))
shared = Server("shared", "1", legacy=LegacyLimits(store="redis://127.0.0.1:1/0"))
stateless = Server("stateless", "1", legacy="stateless")
modern = Server("modern", "1", legacy=None)
"""
WORKERS = ("--transport", "http", "--workers", "2", "--port", "0")
REFUSAL = "snodo: --workers 2 would keep each legacy (initialize) session in one worker's memory"


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """``uvicorn.run`` replaced: what it would have been asked to serve, nothing served."""
    import uvicorn

    (tmp_path / "servers.py").write_text(SERVERS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SNODO_STATE_SECRET", "ab" * 32)
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.append(options))
    return calls


def run(target: str, *extra: str) -> int:
    from snodo import cli

    return cli.main(["run", f"servers.py:{target}", "--transport", "http", *extra])


@pytest.mark.parametrize("target", ["default", "memory"])
def test_unshared_legacy_sessions_are_refused_before_any_worker(
    started: list[dict[str, Any]], target: str
) -> None:
    with pytest.raises(SystemExit) as refused:
        run(target, "--workers", "2")
    message = str(refused.value)
    assert message.startswith(REFUSAL)
    for way_out in (
        "LegacyLimits(store='redis://...')",
        "SNODO_LEGACY_STORE",
        "Server(legacy='stateless')",
        "Server(legacy=None)",
        "--unshared-legacy-sessions",
    ):
        assert way_out in message
    assert "\n" not in message
    assert started == [], "no worker started"


@pytest.mark.parametrize("target", ["shared", "stateless", "modern"])
def test_shared_stateless_or_modern_only_serve(started: list[dict[str, Any]], target: str) -> None:
    assert run(target, "--workers", "2") == 0
    assert started[-1]["workers"] == 2


def test_the_opt_out_and_one_worker_serve(started: list[dict[str, Any]]) -> None:
    assert run("default", "--workers", "2", "--unshared-legacy-sessions") == 0
    assert run("default") == 0
    assert len(started) == 2


def test_the_real_command_refuses_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "servers.py").write_text(SERVERS)
    process = subprocess.Popen(
        [sys.executable, "-m", "snodo", "run", "servers.py:default", *WORKERS],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a run that served would be ended, workers and all
    )
    try:
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 1
    assert err.startswith(REFUSAL) and err.count("\n") == 1


def test_the_proxy_hands_the_opt_out_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """``snodo proxy`` runs ``snodo run`` with its serving options, the opt-out too."""
    import argparse

    from snodo.cli import proxy_command

    parser = argparse.ArgumentParser()
    proxy_command.register(parser.add_subparsers())
    handed: list[list[str]] = []
    monkeypatch.setenv(proxy_command.BACKEND_ENV, "")  # put back as it was afterwards
    for extra in ([], ["--unshared-legacy-sessions"], ["--unshared-replay-guard"]):
        args = parser.parse_args(["proxy", "--workers", "2", *extra, "https://b.example/mcp"])
        proxy_command.main(args, lambda argv: handed.append(argv) or 0)
    assert "--unshared-legacy-sessions" not in handed[0]
    assert "--unshared-replay-guard" not in handed[0]
    assert handed[1][-1] == "--unshared-legacy-sessions"
    assert handed[1][handed[1].index("--workers") + 1] == "2"
    assert handed[2][-1] == "--unshared-replay-guard"


PROXIES = """from snodo import Server
from snodo.auth import OIDCProxy
from snodo.auth.proxy_store import SQLiteProxyStore

CONFIG = dict(
    config_url="https://idp.example/.well-known/openid-configuration",
    client_id="id",
    client_secret="secret",
    base_url="https://mcp.example",
)
memory = Server("memory", "1", legacy=None, authorization=OIDCProxy(**CONFIG, secret="s" * 32))
keyless = Server(
    "keyless", "1", legacy=None, authorization=OIDCProxy(**CONFIG, store=SQLiteProxyStore("p.db"))
)
shared = Server(
    "shared",
    "1",
    legacy=None,
    authorization=OIDCProxy(**CONFIG, secret="s" * 32, store=SQLiteProxyStore("p.db")),
)
"""


@pytest.mark.parametrize(
    ("target", "kept"),
    [("memory", "in this process's memory"), ("keyless", "a key of this process")],
)
def test_an_oauth_proxy_keeping_sign_ins_in_one_process_is_refused(
    started: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, target: str, kept: str
) -> None:
    Path("servers.py").write_text(PROXIES)
    monkeypatch.delenv("SNODO_AUTH_SECRET", raising=False)
    with pytest.raises(SystemExit) as refused:
        run(target, "--workers", "2", "--unshared-legacy-sessions")
    message = str(refused.value)
    assert message.startswith("snodo: --workers 2: the OAuth proxy") and kept in message
    assert "RedisProxyStore('redis://...')" in message and "SNODO_AUTH_SECRET" in message
    assert started == []
    assert run(target) == 0  # one process keeps what it needs


def test_an_oauth_proxy_sharing_store_and_secret_serves_workers(
    started: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("servers.py").write_text(PROXIES)
    assert run("shared", "--workers", "2") == 0
    monkeypatch.setenv("SNODO_AUTH_SECRET", "t" * 32)
    assert run("keyless", "--workers", "2") == 0
    assert started[-1]["workers"] == 2


GUARDED = """from typing import Annotated

from snodo import Ask, Server, State, elicitation
from snodo.stores import SQLiteGuard

NAME = elicitation.form(
    "Your name?",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)


def greet(name: Annotated[str | None, Ask(NAME)]) -> str:
    \"\"\"Asks the client.\"\"\"
    return f"hello {name}"


def add(a: int, b: int) -> int:
    \"\"\"Asks nothing.\"\"\"
    return a + b


default = Server("default", "1", legacy=None)
default.tool(greet)
shared = Server("shared", "1", legacy=None, state=State(guard=SQLiteGuard("state-ids.sqlite3")))
shared.tool(greet)
unguarded = Server("unguarded", "1", legacy=None, state=State(guard=False))
unguarded.tool(greet)
quiet = Server("quiet", "1", legacy=None)
quiet.tool(add)
"""
GUARD_REFUSAL = (
    "snodo: --workers 2: tool greet can ask the client, and the replay guard that makes"
    " its request state one-time is each worker's own"
)


def test_an_asking_server_with_each_workers_own_guard_is_refused(
    started: list[dict[str, Any]], tmp_path: Path
) -> None:
    """One-time state is the default; with a guard of each worker's own a final retry
    replayed to another worker would run the handler again: refused, with the ways out."""
    (tmp_path / "servers.py").write_text(GUARDED)
    with pytest.raises(SystemExit) as refused:
        run("default", "--workers", "2")
    message = str(refused.value)
    assert message.startswith(GUARD_REFUSAL), message
    for way_out in ("SQLiteGuard(", "RedisGuard(", "State(guard=False)", "--unshared-replay-guard"):
        assert way_out in message
    assert "\n" not in message and started == []
    for target in ("shared", "unguarded", "quiet"):  # shared, opted out, or nothing to replay
        assert run(target, "--workers", "2") == 0
    assert run("default", "--workers", "2", "--unshared-replay-guard") == 0
    assert run("default") == 0
    assert len(started) == 5
