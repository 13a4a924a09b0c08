"""A bearer token for ``snodo list``/``call`` (and ``proxy``) from a file or the
environment, not only from the command line every local user can read: what a real
HTTP endpoint on loopback receives in ``Authorization``."""

from __future__ import annotations

import argparse
import os
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from snodo.cli import proxy_command
from tests.support import processes
from tests.support.loopback import http_server

AUTH_ENV = "SNODO_AUTH_TOKEN"


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request 401 and notes the Authorization it carried."""

    seen: list[str | None]

    def _refuse(self) -> None:
        self.seen.append(self.headers.get("authorization"))
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.send_response(401)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._refuse()

    def do_POST(self) -> None:
        self._refuse()

    def log_message(self, *_: object) -> None:
        return None


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[str | None]]]:
    seen: list[str | None] = []
    with http_server(type("Recorder", (_Recorder,), {"seen": seen})) as http:
        yield f"http://127.0.0.1:{http.server_address[1]}/mcp", seen


def snodo(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The tool without the token this run may have in its own environment."""
    clean = {k: v for k, v in os.environ.items() if k != AUTH_ENV}
    return processes.snodo(*argv, env={**clean, **(env or {})})


def test_the_token_comes_from_a_file(
    endpoint: tuple[str, list[str | None]], tmp_path: Path
) -> None:
    url, seen = endpoint
    token = tmp_path / "token"
    token.write_text("from-the-file\n")
    done = snodo("list", url, "--auth-file", str(token), "--timeout", "30")
    assert done.returncode == 1, "the endpoint refuses everything"
    assert seen and set(seen) == {"Bearer from-the-file"}, done.stderr


def test_the_token_comes_from_the_environment(endpoint: tuple[str, list[str | None]]) -> None:
    url, seen = endpoint
    done = snodo("list", url, "--timeout", "30", env={AUTH_ENV: "from-the-env"})
    assert done.returncode == 1
    assert seen and set(seen) == {"Bearer from-the-env"}, done.stderr


def test_a_file_without_a_token_and_both_options_are_one_line(
    endpoint: tuple[str, list[str | None]], tmp_path: Path
) -> None:
    url, seen = endpoint
    empty = tmp_path / "empty"
    empty.write_text("\n")
    done = snodo("list", url, "--auth-file", str(empty))
    assert done.stderr == f"snodo: --auth-file {empty} holds no token\n"
    both = snodo("call", url, "t", "--auth", "x", "--auth-file", str(empty))
    assert both.stderr == "snodo: give --auth or --auth-file, not both\n"
    assert seen == [], "nothing was sent"


@pytest.mark.parametrize("command", ["list", "call", "proxy"])
def test_help_says_the_command_line_is_visible(command: str) -> None:
    helped = " ".join(snodo(command, "--help").stdout.split())
    assert "other local users can read it in the process list" in helped
    assert "--auth-file PATH" in helped and AUTH_ENV in helped


def test_the_proxy_takes_its_backend_token_from_a_file(tmp_path: Path) -> None:
    """``snodo proxy`` hands the token to its workers in its backend description."""
    token = tmp_path / "token"
    token.write_text("backend-token")
    parser = argparse.ArgumentParser()
    proxy_command.register(parser.add_subparsers())
    args = parser.parse_args(["proxy", "--auth-file", str(token), "https://backend.example/mcp"])
    assert proxy_command.backend_of(args)["auth"] == "backend-token"
