"""The README's Python is real: every ```python block is a file in examples/ (the line
before the fence names it), the two agree character for character, and each program
runs here as a reader would run it. The documentation site shows the other programs
run here (tests/docs checks that each program it shows is run by a test)."""

from __future__ import annotations

import importlib.util
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

from snodo.core.http_headers import request_headers
from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, stop
from tests.support.wire import answer, request

EXAMPLES = ROOT / "examples"
SNODO = str(Path(sys.executable).with_name("snodo"))
FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
MARKER = re.compile(r"^<!-- (examples/[\w/]+\.py) -->$")
README_PROGRAMS = ["weather.py"]


def readme_blocks() -> list[tuple[str | None, str]]:
    """(the file the marker line names, or None; the block's text) for each block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = []
    for found in FENCE.finditer(text):
        before = text[: found.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.match(before)
        blocks.append((marker.group(1) if marker else None, found.group(1)))
    return blocks


def test_every_python_block_is_an_example_file_word_for_word() -> None:
    blocks = readme_blocks()
    assert [name for name, _ in blocks] == [f"examples/{n}" for n in README_PROGRAMS]
    for name, block in blocks:
        assert name is not None
        assert block == (ROOT / name).read_text(encoding="utf-8"), f"README differs from {name}"


def test_the_block_reader_sees_a_drifted_or_unnamed_block() -> None:
    # The reader the check above relies on, on a README it must refuse.
    assert MARKER.match("<!-- examples/weather.py -->")
    assert not MARKER.match("<!-- weather.py -->")
    sample = "text\n```python\nprint(1)\n```\n\n<!-- examples/a.py -->\n```python\nx = 2\n```\n"
    found = [
        (MARKER.match(sample[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]), m.group(1))
        for m in FENCE.finditer(sample)
    ]
    assert [(bool(marker), body) for marker, body in found] == [
        (False, "print(1)\n"),
        (True, "x = 2\n"),
    ]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def _load_weather() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_weather", EXAMPLES / "weather.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_server_example_asks_then_answers() -> None:
    server = _load_weather().server
    caps = {"elicitation": {}}

    def ask(id: int) -> dict[str, Any]:
        call = {"name": "forecast", "arguments": {"days": 2}}
        found: dict[str, Any] = answer(
            server, request("tools/call", call, id=id, capabilities=caps)
        )
        return dict(found["result"])

    first = ask(1)
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {
        "city": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Which city?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    }

    def retry(response: dict[str, object], id: int, state: str) -> dict[str, object]:
        params = {
            "name": "forecast",
            "arguments": {"days": 2},
            "inputResponses": {"city": response},
            "requestState": state,
        }
        return dict(answer(server, request("tools/call", params, id=id, capabilities=caps)))

    oslo = {"action": "accept", "content": {"city": "Oslo"}}
    accepted = retry(oslo, 2, first["requestState"])["result"]
    assert accepted == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "2-day forecast for Oslo: sunny"}],
        "_meta": {
            "io.modelcontextprotocol/serverInfo": {
                "name": "weather",
                "version": "1.0.0",
                "description": "Forecasts for the user's city.",
            }
        },
    }
    # The example's replay guard: the same final retry again is refused, not run again.
    replayed = retry(oslo, 3, first["requestState"])
    assert replayed["error"] == {"code": -32602, "message": "Invalid request state"}, replayed
    declined = retry({"action": "decline"}, 4, ask(5)["requestState"])["result"]
    assert declined["content"] == [{"type": "text", "text": "No city, no forecast."}]


def test_the_first_server_runs_as_written() -> None:
    """No secret to set first: ``snodo call`` of the file, the question answered on stdin,
    as the README's first screen shows it."""
    env = {k: v for k, v in os.environ.items() if k != "SNODO_STATE_SECRET"}
    done = subprocess.run(
        [SNODO, "call", "examples/weather.py", "forecast", "days=2"],
        cwd=ROOT,
        env=env,
        input="y\nOslo\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "2-day forecast for Oslo: sunny\n"), done.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "snodo call examples/weather.py forecast days=2" in readme


def test_the_client_example_against_the_server_example_over_http() -> None:
    port = free_port()
    server = subprocess.Popen(
        [SNODO, "run", "weather:server", "--transport", "http", "--port", str(port)],
        cwd=EXAMPLES,
        env=_env(SNODO_STATE_SECRET=secrets.token_hex(32)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert accepting(server, port)
        done = subprocess.run(
            [sys.executable, "weather_client.py", f"http://127.0.0.1:{port}/mcp"],
            cwd=EXAMPLES,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        stop(server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "forecast: Weather for the user's city.\nWhich city?\n2-day forecast for Oslo: sunny\n"
    )


def test_the_authentication_example_serves_only_bearers_of_a_token() -> None:
    token = secrets.token_urlsafe(24)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "http_auth.py", str(port)],
        cwd=EXAMPLES,
        env=_env(WHOAMI_TOKEN=token),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert accepting(process, port)
        body = request("tools/call", {"name": "whoami", "arguments": {}}, id=7)
        headers = {
            "content-type": "application/json",
            "host": "api.example.com",
            **request_headers("tools/call", body["params"], "2026-07-28"),
        }
        url = f"http://127.0.0.1:{port}/mcp"

        def post(**extra: str) -> httpx.Response:
            return httpx.post(url, json=body, headers={**headers, **extra}, timeout=10)

        refused = post()
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == (
            'Bearer resource_metadata="https://api.example.com/.well-known/mcp"'
        )
        assert post(authorization="Bearer not-the-token").status_code == 401
        assert post(host=f"127.0.0.1:{port}", authorization=f"Bearer {token}").status_code == 421
        served = post(authorization=f"Bearer {token}")
        assert served.status_code == 200
        assert served.json()["result"]["content"] == [{"type": "text", "text": "alice"}]
    finally:
        stop(process)


def test_the_oauth_example_challenges_a_caller_without_a_token() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    process = subprocess.Popen(
        [SNODO, "run", "oauth_server:server", "--transport", "http", "--port", str(port)],
        cwd=EXAMPLES,
        env=_env(NOTES_RESOURCE=resource, NOTES_ISSUER="http://127.0.0.1:9"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert accepting(process, port)
        body = request("tools/call", {"name": "read_notes", "arguments": {}}, id=7)
        headers = {
            "content-type": "application/json",
            **request_headers("tools/call", body["params"], "2026-07-28"),
        }
        refused = httpx.post(resource, json=body, headers=headers, timeout=10)
        metadata = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{metadata}", scope="notes:read"'
        )
        assert httpx.get(metadata, timeout=10).json() == {
            "resource": resource,
            "authorization_servers": ["http://127.0.0.1:9"],
            "scopes_supported": ["notes:read", "notes:write"],
            "bearer_methods_supported": ["header"],
        }
    finally:
        stop(process)


def test_the_wire_example_prints_what_its_comments_say() -> None:
    done = subprocess.run(
        [sys.executable, "wire_models.py"],
        cwd=EXAMPLES,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "forecast {'days': 2}",
        "accept {'city': 'Oslo'}",
        "True",
        "['_meta', 'arguments', 'inputResponses', 'name']",
        "TextContent",
        "True",
    ]
