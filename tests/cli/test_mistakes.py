"""Each command of the CLI against the usual mistakes, as real processes: a server that
asks for credentials but publishes no OAuth metadata, a redirect, a wrong path, nothing
listening, an ASGI app named where a Server belongs, a server that exits. Each failure
is one ``snodo:`` line (a stdio server's own stderr after it) naming the fix, and exit
status 1: never a traceback."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Serving, free_port, serving, snodo

pytest.importorskip("authlib")
pytest.importorskip("uvicorn")
pytestmark = pytest.mark.slow  # a process per mistake

SITE = "tests.cli.mistaken_site:app"
EXITS = "import sys; print('cannot start: no configuration', file=sys.stderr); sys.exit(3)"


@pytest.fixture(scope="module")
def site() -> Iterator[Serving]:
    def command(port: int) -> list[str]:
        uvicorn = [sys.executable, "-m", "uvicorn", SITE, "--port", str(port)]
        return [*uvicorn, "--log-level", "warning"]

    with serving(command) as found:
        yield found


def one_line(*argv: str, config: Path) -> str:
    """The command's stderr, checked to be one ``snodo:`` line and exit status 1."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "BROWSER": "true"}
    done = snodo(*argv, env=env, timeout=90)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("snodo: "), done.stderr
    return lines[0]


@pytest.mark.parametrize(
    "command",
    [["list"], ["call", "{url}", "search"], ["list", "--oauth"], ["auth", "login"]],
    ids=["list", "call", "list --oauth", "auth login"],
)
def test_each_http_mistake_is_one_line_naming_the_fix(
    site: Serving, command: list[str], tmp_path: Path
) -> None:
    def argv(url: str) -> list[str]:
        words = [word.format(url=url) for word in command]
        return words if "{url}" in command else [*words[:2], url, *words[2:]]

    locked = f"{site.base}/locked"
    said = one_line(*argv(locked), config=tmp_path)
    if "--oauth" in command or command[0] == "auth":
        assert said == (
            f"snodo: {locked} asks for credentials but names no authorization server to sign"
            " in at (no OAuth protected resource metadata): give a bearer token (--auth-file"
            " PATH or SNODO_AUTH_TOKEN)"
        )
    else:
        assert said == (
            f"snodo: {locked} needs a sign-in (HTTP 401: invalid_token): snodo auth login"
            f" {locked}, or a bearer token (--auth-file PATH or SNODO_AUTH_TOKEN)"
        )
    moved = f"{site.base}/moved"
    assert one_line(*argv(moved), config=tmp_path) == (
        f"snodo: {moved} redirects to {site.base}/mcp/ (HTTP 307): call that URL (an MCP"
        " client does not follow redirects)"
    )
    wrong = f"{site.base}/mpc"
    assert one_line(*argv(wrong), config=tmp_path) == (
        f"snodo: nothing answers MCP at {wrong} (HTTP 404): check the endpoint's path"
        " (snodo run serves /mcp; a mounted app, the mount's path)"
    )
    nobody = f"http://127.0.0.1:{free_port()}/mcp"
    assert one_line(*argv(nobody), config=tmp_path) == (
        f"snodo: nothing listens at {nobody} (connection refused): start the server, or"
        " check the port"
    )


def test_the_era_named_does_not_hide_a_wrong_path(site: Serving, tmp_path: Path) -> None:
    wrong = f"{site.base}/mpc"
    for era in ("modern", "legacy"):
        said = one_line("list", wrong, "--era", era, config=tmp_path)
        assert said.startswith(f"snodo: nothing answers MCP at {wrong} (HTTP 404)"), said


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_run_names_the_server_when_given_an_asgi_app(transport: str, tmp_path: Path) -> None:
    port = str(free_port())
    said = one_line("run", SITE, "--transport", transport, "--port", port, config=tmp_path)
    assert said == (
        f"snodo: {SITE} is an ASGI app (a web framework's), not a snodo Server: name the"
        " Server it mounts (tests.cli.mistaken_site:server), or serve the app with uvicorn"
    )


def test_list_and_call_say_what_a_target_that_is_no_server_is(tmp_path: Path) -> None:
    for argv in (["list", SITE], ["call", SITE, "search"]):
        env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
        done = snodo(*argv, env=env, timeout=90)
        assert done.returncode == 1
        assert done.stderr.splitlines()[-1] == (
            f"snodo: {SITE} is an ASGI app (a web framework's), not a snodo Server: name"
            " the Server it mounts (tests.cli.mistaken_site:server), or serve the app with"
            " uvicorn"
        ), done.stderr
        assert "Traceback" not in done.stderr


def test_a_server_that_exits_is_one_line_and_its_own_stderr(tmp_path: Path) -> None:
    server = shlex.join([sys.executable, "-c", EXITS])
    for argv in (["list", "--stdio", server], ["call", "--stdio", server, "search"]):
        done = snodo(*argv, timeout=90)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            "snodo: TransportError: the server process ended",
            "snodo: the server's stderr ended with:",
            "  cannot start: no configuration",
        ], done.stderr
