"""Property-based fuzzing of envelopes, inputResponses, requestState and raw bytes over
the in-process core, stdio and HTTP: never a crash, hang, traceback or HTTP 500; always
a valid JSON-RPC error; and the handler never runs on an invalid envelope or state."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from snodo.core.http_headers import request_headers
from snodo_wire import adapters
from tests.hardening import server as target
from tests.support.paths import ROOT
from tests.support.strategies import json_values, scalars
from tests.support.wire import meta

META = meta({"elicitation": {}})

bad_responses = st.one_of(
    scalars,
    st.lists(json_values, max_size=2),
    st.dictionaries(
        st.text(max_size=6),
        st.one_of(scalars, st.lists(scalars, max_size=2)),
        min_size=1,
        max_size=3,
    ),
    st.fixed_dictionaries(
        {
            "name": st.fixed_dictionaries(
                {"action": st.sampled_from(["accept", "maybe", 1])},
                optional={
                    "content": st.one_of(json_values, st.dictionaries(st.just("name"), scalars))
                },
            )
        }
    ).filter(
        lambda d: (
            not (
                d["name"].get("action") == "accept"
                and isinstance(d["name"].get("content"), dict)
                and isinstance(d["name"]["content"].get("name"), str)
            )
        )
    ),
)
forged_states = st.one_of(
    st.text(max_size=60),
    st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.", max_size=120
    ).map(lambda s: "v1." + s),
    st.integers(),
    st.none(),
    st.lists(st.text(max_size=3), max_size=2),
)


@st.composite
def invalid_retries(draw: st.DrawFn) -> dict[str, Any]:
    """A tools/call of the counted tool whose envelope or state must be refused."""
    params: dict[str, Any] = {"_meta": META, "name": "guarded"}
    kind = draw(st.sampled_from(["responses", "state", "both"]))
    if kind in ("responses", "both"):
        params["inputResponses"] = draw(bad_responses)
    if kind in ("state", "both") or "inputResponses" not in params:
        params["requestState"] = draw(forged_states)
    return {
        "jsonrpc": "2.0",
        "id": draw(st.integers(1, 10**6)),
        "method": "tools/call",
        "params": params,
    }


def envelope_is_valid(message: dict[str, Any]) -> bool:
    """Whether the schema admits the retry: then the handler may run, to judge the answers."""
    params = message["params"]
    if "requestState" in params:
        return False  # every state drawn here is forged
    try:
        adapters.input_responses.validate_python(params.get("inputResponses"))
    except ValidationError:
        return False
    return True


def _assert_refusal(response: dict[str, Any]) -> None:
    assert response.get("jsonrpc") == "2.0"
    assert "error" in response, response
    assert isinstance(response["error"]["code"], int)
    assert "Traceback" not in json.dumps(response)


@settings(max_examples=300, deadline=None)
@given(invalid_retries())
def test_core_never_runs_the_handler_on_an_invalid_retry(message: dict[str, Any]) -> None:
    before = target.invocations["guarded"]
    reply = asyncio.run(target.server.handle(message))
    assert reply.response is not None
    if envelope_is_valid(message):
        return
    _assert_refusal(reply.response)
    assert target.invocations["guarded"] == before


def _count(client: httpx.Client, url: str) -> int:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META, "name": "invocation_count"},
    }
    headers = {
        "content-type": "application/json",
        **request_headers("tools/call", body["params"], "2026-07-28"),
    }
    return int(client.post(url, json=body, headers=headers).json()["result"]["content"][0]["text"])


@pytest.fixture(scope="module")
def http(http_url: str) -> Iterator[tuple[httpx.Client, str]]:
    with httpx.Client(timeout=10) as client:
        yield client, http_url


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(message=invalid_retries())
def test_http_refuses_invalid_retries_without_running_the_handler(
    http: tuple[httpx.Client, str], message: dict[str, Any]
) -> None:
    client, url = http
    before = _count(client, url)
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "guarded",
    }
    response = client.post(url, content=json.dumps(message), headers=headers)
    assert response.status_code < 500
    body = response.json()
    if not envelope_is_valid(message):
        _assert_refusal(body)
        assert _count(client, url) == before


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_http_arbitrary_bodies(http: tuple[httpx.Client, str], data: bytes) -> None:
    client, url = http
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
    }
    response = client.post(url, content=data, headers=headers)
    assert response.status_code < 500
    if response.status_code != 202:
        body = response.json()
        assert body["jsonrpc"] == "2.0" and "Traceback" not in response.text


def test_stdio_survives_fuzzed_lines(stdio_command: list[str]) -> None:
    """Hundreds of hostile lines, then one valid request: every line answered, server alive."""
    lines: list[bytes] = []
    refused = invalid_retries().filter(lambda m: not envelope_is_valid(m))
    find = st.one_of(
        refused.map(lambda m: json.dumps(m).encode()),
        st.binary(max_size=80).filter(lambda b: b"\n" not in b and b.strip()),
        json_values.map(lambda v: json.dumps(v).encode()),
    )

    @settings(max_examples=250, deadline=None, database=None)
    @given(find)
    def collect(line: bytes) -> None:
        lines.append(line)

    collect()
    valid = {
        "jsonrpc": "2.0",
        "id": "last",
        "method": "tools/call",
        "params": {"_meta": META, "name": "invocation_count"},
    }
    stdin = b"\n".join(lines) + b"\n" + json.dumps(valid).encode() + b"\n"
    done = subprocess.run(
        stdio_command,
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert b"Traceback" not in done.stdout
    last = [a for a in answers if a.get("id") == "last"]
    assert last and last[0]["result"]["content"][0]["text"] == "0"
    for answer in answers:
        assert answer["jsonrpc"] == "2.0" and ("result" in answer or "error" in answer)
