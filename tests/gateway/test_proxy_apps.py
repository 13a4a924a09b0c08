"""MCP Apps through ``snodo proxy``: the backend's declared ``ui`` extension is
advertised by the proxy (its tools, views and app-only tools already passed), as
``snodo list`` of the proxy shows; the tasks extension, whose methods are the front's
own, is not taken from the backend."""

from __future__ import annotations

import json

from tests.support.processes import SNODO, serving, snodo, snodo_run


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
            listed = snodo("list", f"{front.base}/mcp", "--output", "json")
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert found["extensions"] == {"io.modelcontextprotocol/ui": {}}
    assert any(r["uri"] == "ui://week/chart" for r in found["resources"])
