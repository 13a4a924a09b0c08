"""A legacy-only client (PyPI mcp 1.30.0) completes every flow of examples/preferences.py.

The client speaks only the initialize-based revisions; the example is written for MRTR
alone. Over stdio and over HTTP, the bridge must turn each input-required round into
real elicitation requests in the client's session: the tool, the URL-consent tool, the
resource and the prompt all complete with the client's callback answering; and the
declarative greeting tool's three asks (a form, a sample, the roots) arrive as the
server's requests within the one call.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

TARGET = "examples/preferences.py:server"
CLIENT = str(ROOT / "tests" / "legacy" / "sdk_client.py")
SAVED = "Would save: theme dark, language ja."
ONE_FLOW = ["theme", "language", "confirm"]


def _drive(*argv: str) -> dict[str, Any]:
    run = subprocess.run(
        [str(legacy_sdk_python()), CLIENT, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return report


def _check(report: dict[str, Any]) -> None:
    assert report["protocolVersion"] == "2025-11-25"
    assert report["tools"] == ["preferences", "privacy_notice", "greeting"]
    assert report["tool"] == [SAVED]
    assert report["url_tool"] == [
        "You agreed to open the privacy notice; whether you read it is not known."
    ]
    assert report["resource"] == [SAVED]
    assert report["prompt"] == [f"User preferences: {SAVED}"]
    # Every question reached the client's callback, the URL one with an elicitationId.
    assert report["asked"][:-3] == [
        *ONE_FLOW,
        "url:https://example.com/privacy:True",
        *ONE_FLOW,
        *ONE_FLOW,
    ]
    # The greeting's three, asked at once, so in any order.
    assert sorted(report["asked"][-3:]) == ["language", "roots", "sampling"]
    assert report["greeting"] == ["Hallo! [ja; notes]"]


def test_legacy_sdk_over_stdio() -> None:
    _check(_drive("stdio", sys.executable, TARGET))


def test_legacy_sdk_over_http() -> None:
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        report = _drive("http", f"{server.base}/mcp")
    assert report["session"] is True
    _check(report)
