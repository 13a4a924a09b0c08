"""bench/proxy_flow.py still runs: each proxy validated like any server, both flows
measured directly and through snodo's proxy and FastMCP's, every answer right."""

from __future__ import annotations

import re

from tests.bench.quick import run_quick
from tests.support.fastmcp import fastmcp_python


def test_proxy_flow_quick_prints_both_flows_through_both_proxies() -> None:
    fastmcp_python()  # the set-up step made FastMCP's venv, so its proxy is measured too
    output = run_quick("proxy_flow.py")
    for kind in ("snodo", "proxy", "fastmcp"):
        assert re.search(rf"validated {kind} .*: 8 checks", output), output
    for flow in ("mrtr", "echo"):
        assert f"flow {flow} " in output, output
    assert len(re.findall(r"direct: backend +[\d.]+; errors 0", output)) == 2, output
    proxied = re.findall(
        r"(snodo|FastMCP 4\.2\.3) proxy: proxy +([\d.]+) \+ backend +([\d.]+) "
        r".*the proxy alone x[\d.]+.*; errors (\d+)",
        output,
    )
    assert sorted(kind for kind, *_ in proxied) == ["FastMCP 4.2.3"] * 2 + ["snodo"] * 2, output
    for _, proxy_cpu, backend_cpu, errors in proxied:
        # A quick round of FastMCP's proxy is a few dozen requests: the backend's share
        # can fall under one clock tick.
        assert float(proxy_cpu) > 0 and float(backend_cpu) >= 0
        assert errors == "0", output
