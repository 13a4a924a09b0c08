"""snodo run: serving a target over HTTP with an allow-list of host names."""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest

from snodo import State
from snodo.core.http_headers import request_headers
from tests.support.processes import serving, snodo_run
from tests.support.wire import meta

META = meta()


def test_allowed_hosts_and_origins() -> None:
    def command(port: int) -> list[str]:
        return snodo_run(
            "examples/preferences.py:server",
            "http",
            "--port",
            str(port),
            "--allow-host",
            "api.example.com",
        )

    with serving(command) as server:
        port = server.port
        body: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": META},
        }
        headers = {
            "content-type": "application/json",
            **request_headers("server/discover", body["params"], "2026-07-28"),
        }
        url = f"{server.base}/mcp"

        def status(host: str, origin: str | None = None) -> int:
            extra = {"host": host} | ({"origin": origin} if origin else {})
            return httpx.post(url, json=body, headers={**headers, **extra}).status_code

        assert status(f"127.0.0.1:{port}") == 200
        assert status("api.example.com") == 200
        assert status("api.example.com", "https://api.example.com") == 200
        assert status("evil.example.com") == 421
        assert status("api.example.com", "https://evil.example.com") == 403


def test_protected_server_answers_401_with_its_metadata() -> None:
    """``snodo run`` serves a protected server as any other: the settings are on the Server."""

    def command(port: int) -> list[str]:
        resource = f"PROTECTED_RESOURCE=http://127.0.0.1:{port}/mcp"
        return [
            "env",
            resource,
            *snodo_run("examples/protected.py:server", "http", "--port", str(port)),
        ]

    with serving(command) as server:
        resource = f"{server.base}/mcp"
        params = {"name": "read_file", "arguments": {"name": "notes.txt"}, "_meta": META}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        headers = {
            "content-type": "application/json",
            **request_headers("tools/call", params, "2026-07-28"),
        }
        answer = httpx.post(resource, json=body, headers=headers)
        metadata_url = f"{server.base}/.well-known/oauth-protected-resource/mcp"
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{metadata_url}", scope="files:read"'
        )
        document = httpx.get(metadata_url).json()
        assert document["resource"] == resource
        assert document["authorization_servers"] == ["http://127.0.0.1:9000"]


def test_proxy_headers_are_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """uvicorn rewrites the client address and scheme from X-Forwarded-* only on request."""
    import uvicorn

    from snodo import cli

    passed: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: passed.append(options))
    target = "examples/preferences.py:server"
    assert cli.main(["run", target, "--transport", "http"]) == 0
    assert cli.main(["run", target, "--transport", "http", "--proxy-headers"]) == 0
    assert (
        cli.main(
            [
                "run",
                target,
                "--transport",
                "http",
                "--proxy-headers",
                "--forwarded-allow-ips",
                "10.0.0.1",
            ]
        )
        == 0
    )
    assert [options["proxy_headers"] for options in passed] == [False, True, True]
    assert "forwarded_allow_ips" not in passed[0]
    assert passed[2]["forwarded_allow_ips"] == "10.0.0.1"


def test_workers_without_a_secret_share_one_made_for_the_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each worker builds its own Server; one given no secret reads SNODO_STATE_SECRET,
    which the parent sets for the run when it is unset, so the workers open each other's
    request state. A secret already set is left as it is."""
    import uvicorn

    from snodo import cli
    from snodo.core.context import Context
    from snodo.core.state.keyring import SECRET_ENV
    from snodo.server import Server

    seen: list[str | None] = []
    monkeypatch.setattr(
        uvicorn, "run", lambda app, **options: seen.append(os.environ.get(SECRET_ENV))
    )
    monkeypatch.delenv(SECRET_ENV, raising=False)
    argv = ["run", "examples/preferences.py:server", "--transport", "http", "--workers", "2"]
    argv.append("--unshared-legacy-sessions")  # no legacy client here (tests/cli/test_workers.py)
    argv.append("--unshared-replay-guard")  # and no replay: each worker's guard will do
    assert cli.main(argv) == 0
    made = seen[-1]
    assert made is not None and len(bytes.fromhex(made)) == 32
    assert f"{SECRET_ENV} is not set" in capsys.readouterr().err
    # Two workers of that run (their states sealed to be opened more than once here).
    one, two = (
        Server("w1", "1", state=State(guard=False)),
        Server("w2", "1", state=State(guard=False)),
    )
    assert not one.state_per_process
    request = Context(1, "tools/call", {"name": "t"}, "2026-07-28", {})
    assert two.keyring.open(one.keyring.seal("paused", request), request) == "paused"
    monkeypatch.setenv(SECRET_ENV, "cd" * 32)
    assert cli.main(argv) == 0
    assert seen[-1] == "cd" * 32
    assert "is not set" not in capsys.readouterr().err
