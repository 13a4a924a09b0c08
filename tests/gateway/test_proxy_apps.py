"""MCP Apps through ``snodo proxy``: the backend's declared ``ui`` extension is
advertised by the proxy (its tools, views and app-only tools already passed), as
``snodo list`` of the proxy shows; the tasks extension, whose methods are the front's
own, is not taken from the backend."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

SNODO = [sys.executable, "-m", "snodo"]


def test_the_proxy_advertises_the_backends_apps_extension() -> None:
    with serving(
        lambda port: snodo_run("examples/apps.py:server", "http", "--port", str(port))
    ) as app:
        backend = f"{app.base}/mcp"
        proxy = lambda port: [  # noqa: E731
            *SNODO,
            "proxy",
            "--transport",
            "http",
            "--port",
            str(port),
            backend,
        ]
        with serving(proxy) as front:
            listed = subprocess.run(
                [*SNODO, "list", f"{front.base}/mcp", "--output", "json"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert found["extensions"] == {"io.modelcontextprotocol/ui": {}}
    assert any(r["uri"] == "ui://week/chart" for r in found["resources"])
