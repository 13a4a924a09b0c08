"""``snodo run`` with the standard OTEL_* variables: the console shows a flow as linked spans."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Any

import httpx

from snodo.core.http_headers import request_headers
from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, snodo_run, stop
from tests.support.wire import request

CAPABLE = {"elicitation": {"form": {}}}
ANSWERS = {
    "theme": {"action": "accept", "content": {"theme": "dark"}},
    "language": {"action": "accept", "content": {"language": "de"}},
}


def json_values(text: str) -> list[Any]:
    """Every JSON value in ``text``, one after another (the console's spans span lines)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while True:
        at = text.find("{", at)
        if at < 0:
            return found
        value, at = decoder.raw_decode(text, at)
        found.append(value)


def serve_two_rounds(env: dict[str, str], *extra: str) -> tuple[list[dict[str, Any]], str]:
    """Two rounds of the preferences flow over stdio; the responses and stderr."""
    with tempfile.TemporaryFile() as errors:
        with subprocess.Popen(
            snodo_run("examples/preferences.py:server", "stdio", *extra),
            cwd=ROOT,
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        ) as process:
            responses = _two_rounds(process)
        errors.seek(0)
        return responses, errors.read().decode()


def _two_rounds(process: subprocess.Popen[bytes]) -> list[dict[str, Any]]:
    assert process.stdin is not None and process.stdout is not None
    try:
        first = request("tools/call", {"name": "preferences"}, capabilities=CAPABLE)
        process.stdin.write(json.dumps(first).encode() + b"\n")
        process.stdin.flush()
        one = json.loads(process.stdout.readline())
        state = one["result"]["requestState"]
        params = {"name": "preferences", "inputResponses": ANSWERS, "requestState": state}
        second = request("tools/call", params, id=2, capabilities=CAPABLE)
        process.stdin.write(json.dumps(second).encode() + b"\n")
        process.stdin.flush()
        two = json.loads(process.stdout.readline())
        process.stdin.close()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
    return [one, two]


def test_console_exporter_prints_a_two_round_flow_as_linked_spans() -> None:
    env = {
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "console",
        "OTEL_SERVICE_NAME": "prefs-under-test",
    }
    responses, stderr = serve_two_rounds(env, "--request-log")
    assert [r["result"]["resultType"] for r in responses] == ["input_required"] * 2
    values = json_values(stderr)
    spans = [v for v in values if "context" in v and "kind" in v]
    assert [s["name"] for s in spans] == ["tools/call preferences"] * 2
    one, two = spans
    assert one["resource"]["attributes"]["service.name"] == "prefs-under-test"
    assert one["attributes"]["network.transport"] == "pipe"
    assert two["attributes"]["snodo.flow.id"] == one["attributes"]["snodo.flow.id"]
    assert two["attributes"]["snodo.flow.round"] == 2
    assert [link["context"]["span_id"] for link in two["links"]] == [one["context"]["span_id"]]
    logs = [v for v in values if v.get("event") == "mcp.request"]
    assert [line["span_id"] for line in logs] == [s["context"]["span_id"][2:] for s in spans]
    # The metrics reader flushes at exit: two requests, both asking for input.
    counted = [
        point
        for v in values
        for resource in v.get("resource_metrics", [])
        for scope in resource["scope_metrics"]
        for metric in scope["metrics"]
        if metric["name"] == "snodo.server.requests"
        for point in metric["data"]["data_points"]
    ]
    assert [(p["attributes"]["snodo.outcome"], p["value"]) for p in counted] == [
        ("input_required", 2)
    ]


def test_without_otel_variables_nothing_is_printed() -> None:
    clean = {key: "" for key in os.environ if key.startswith("OTEL_")}
    responses, stderr = serve_two_rounds(clean)
    assert [r["result"]["resultType"] for r in responses] == ["input_required"] * 2
    assert stderr == ""


def test_over_http_the_traceparent_header_is_the_parent() -> None:
    parent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
    port = free_port()
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "console"}
    argv = snodo_run("examples/preferences.py:server", "http", "--port", str(port))
    with tempfile.TemporaryFile() as errors:
        with subprocess.Popen(
            argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stderr=errors
        ) as p:
            try:
                assert accepting(p, port)
                body = request("tools/list")
                headers = {
                    "content-type": "application/json",
                    "traceparent": parent,
                    **request_headers("tools/list", body["params"], "2026-07-28"),
                }
                url = f"http://127.0.0.1:{port}/mcp"
                assert httpx.post(url, json=body, headers=headers).status_code == 200
            finally:
                stop(p)
        errors.seek(0)
        values = json_values(errors.read().decode())
    [span] = [v for v in values if "context" in v and "kind" in v]
    assert span["name"] == "tools/list"
    assert span["context"]["trace_id"] == "0x0af7651916cd43dd8448eb211c80319c"
    assert span["parent_id"] == "0x00f067aa0ba902b7"
    assert span["attributes"]["network.transport"] == "tcp"
