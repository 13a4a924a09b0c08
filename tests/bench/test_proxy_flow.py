"""bench/proxy_flow.py still runs: the proxy validated like any server, both flows
measured directly and through it, every answer right."""

from __future__ import annotations

import re

from tests.bench.quick import run_quick


def test_proxy_flow_quick_prints_both_flows() -> None:
    output = run_quick("proxy_flow.py")
    assert re.search(r"validated proxy .*: 8 checks", output), output
    for flow in ("mrtr", "echo"):
        assert f"flow {flow} " in output, output
    proxied = re.findall(r"proxied: proxy +([\d.]+) \+ backend +([\d.]+) .*; errors (\d+)", output)
    assert len(proxied) == 2, output
    for proxy_cpu, backend_cpu, errors in proxied:
        assert float(proxy_cpu) > 0 and float(backend_cpu) > 0
        assert errors == "0", output
