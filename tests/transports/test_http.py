"""Streamable HTTP against a real uvicorn process on loopback, with raw httpx requests.

Every test talks to ``python -m snodo run tests/transports/servers.py:server --transport
http`` (one process for the module). After every test an autouse fixture checks that
the server still answers a plain call, so no malformed request can leave it broken.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.transport_server import http_server
from tests.support.wire import VERSION, request, validate_outgoing

JSON = "application/json"
SSE = "text/event-stream"
BOTH = f"{JSON}, {SSE}"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


# --- helpers -----------------------------------------------------------------------------


def call(
    name: str, arguments: dict[str, Any] | None = None, /, id: int | str = 1, **meta: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return request("tools/call", params, id=id, **meta)


def headers_for(message: dict[str, Any], /, **overrides: str | None) -> dict[str, str]:
    """The headers a correct client sends for ``message``; ``None`` removes one."""
    headers = {
        "Content-Type": JSON,
        "Accept": BOTH,
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": message["method"],
    }
    params = message.get("params") or {}
    key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(
        message["method"]
    )
    if key is not None and isinstance(params.get(key), str):
        headers["Mcp-Name"] = params[key]
    for name, value in overrides.items():
        header = name.replace("_", "-")
        headers = {k: v for k, v in headers.items() if k.lower() != header.lower()}
        if value is not None:
            headers[header] = value
    return headers


def post(
    client: httpx.Client,
    message: Any,
    headers: dict[str, str] | None = None,
    *,
    content: bytes | None = None,
    **overrides: str | None,
) -> httpx.Response:
    if headers is None:
        headers = headers_for(message, **overrides)
    body = content if content is not None else json.dumps(message).encode()
    return client.post("", content=body, headers=headers)


def sse_messages(text: str) -> list[dict[str, Any]]:
    """Strictly parsed SSE: every event is ``event: message`` plus exactly one data line."""
    messages = []
    for block in text.split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if not lines:
            continue
        data = [line for line in lines if line.startswith("data:")]
        assert len(data) == 1, f"an event must carry its message on one data line: {block!r}"
        assert all(line.startswith(("data:", "event: message")) for line in lines), block
        messages.append(json.loads(data[0][5:]))
    return messages


def error_of(response: httpx.Response, status: int, code: int) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith(JSON)
    body = response.json()
    validate_outgoing(body, None)
    assert body["error"]["code"] == code, body
    return dict(body)


def text_of(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    body = response.json()
    result = body["result"]
    assert result["resultType"] == "complete", result
    return str(result["content"][0]["text"])


@pytest.fixture(scope="module")
def client(http_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=http_url, timeout=10) as session:
        yield session


@pytest.fixture(autouse=True)
def still_serving(client: httpx.Client) -> Iterator[None]:
    yield
    assert text_of(post(client, call("echo", {"text": "alive"}))) == "alive"


# --- answers: JSON and SSE --------------------------------------------------------------


@pytest.mark.parametrize("request_id", [7, "seven", 0])
def test_a_plain_call_is_answered_with_json(client: httpx.Client, request_id: int | str) -> None:
    message = call("add", {"a": 2, "b": 3}, id=request_id)
    response = post(client, message)
    assert response.status_code == 200
    assert response.headers["content-type"] == JSON
    assert int(response.headers["content-length"]) == len(response.content)
    assert b"\n" not in response.content.strip()
    body = response.json()
    assert body["id"] == request_id and type(body["id"]) is type(request_id)
    validate_outgoing(body, "tools/call")
    assert body["result"]["content"] == [{"type": "text", "text": "5"}]


def test_progress_turns_the_answer_into_sse(client: httpx.Client) -> None:
    message = call("progress", {"steps": 3}, id=11, progressToken="p-11")
    response = post(client, message)
    assert response.status_code == 200
    assert response.headers["content-type"] == SSE
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["cache-control"] == "no-cache"
    messages = sse_messages(response.text)
    *notes, final = messages
    assert [n["method"] for n in notes] == ["notifications/progress"] * 3
    assert [n["params"]["progress"] for n in notes] == [1, 2, 3]
    assert {n["params"]["progressToken"] for n in notes} == {"p-11"}
    assert all(n["params"]["total"] == 3 for n in notes)
    for note in notes:
        validate_outgoing(note, None)
    assert final["id"] == 11
    validate_outgoing(final, "tools/call")
    assert final["result"]["content"][0]["text"] == "done after 3 steps"


def test_a_progress_token_without_progress_stays_json(client: httpx.Client) -> None:
    response = post(client, call("echo", {"text": "quiet"}, progressToken=5))
    assert response.headers["content-type"] == JSON
    assert text_of(response) == "quiet"


def test_log_messages_stream_only_when_the_request_opts_in(client: httpx.Client) -> None:
    quiet = post(client, call("chatty", {}))
    assert quiet.headers["content-type"] == JSON
    loud = post(client, call("chatty", {}, id=3, **{"io.modelcontextprotocol/logLevel": "info"}))
    assert loud.headers["content-type"] == SSE
    note, final = sse_messages(loud.text)
    validate_outgoing(note, None)
    assert note["method"] == "notifications/message"
    assert note["params"] == {"level": "info", "data": {"said": "hello"}, "logger": "chatty"}
    assert final["id"] == 3


@pytest.mark.parametrize(
    ("accept", "content_type"),
    [
        (None, JSON),
        ("*/*", JSON),
        (BOTH, SSE),
        (f"{SSE}, {JSON}", SSE),
        (JSON, JSON),
        (SSE, SSE),
    ],
)
def test_accept_decides_whether_notifications_may_stream(
    client: httpx.Client, accept: str | None, content_type: str
) -> None:
    message = call("progress", {"steps": 2}, id=21, progressToken="acc")
    response = post(client, message, Accept=accept)
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type
    if content_type == JSON:
        body = response.json()  # the notifications were not sent: the client can't read them
        assert body["id"] == 21 and "result" in body
    else:
        messages = sse_messages(response.text)
        assert [m.get("method") for m in messages[:-1]] == ["notifications/progress"] * 2
        assert messages[-1]["id"] == 21


@pytest.mark.parametrize("accept", ["text/html", "application/xml", "image/png, text/plain"])
def test_an_accept_without_json_or_sse_is_refused(client: httpx.Client, accept: str) -> None:
    response = post(client, call("echo", {"text": "x"}), Accept=accept)
    assert response.status_code == 406


def test_several_sse_streams_run_concurrently(http_url: str) -> None:
    async def one(session: httpx.AsyncClient, index: int) -> list[dict[str, Any]]:
        message = call("progress", {"steps": 4, "delay": 0.1}, id=100 + index, progressToken=index)
        response = await session.post("", json=message, headers=headers_for(message))
        assert response.headers["content-type"] == SSE
        return sse_messages(response.text)

    async def main() -> list[list[dict[str, Any]]]:
        async with httpx.AsyncClient(base_url=http_url, timeout=10) as session:
            return await asyncio.gather(*(one(session, i) for i in range(6)))

    started = time.monotonic()
    streams = asyncio.run(main())
    elapsed = time.monotonic() - started
    assert elapsed < 6 * 0.4, f"streams were served one after another ({elapsed:.2f} s)"
    for index, messages in enumerate(streams):
        *notes, final = messages
        assert [n["params"]["progressToken"] for n in notes] == [index] * 4
        assert [n["params"]["progress"] for n in notes] == [1, 2, 3, 4]
        assert final["id"] == 100 + index
        assert final["result"]["content"][0]["text"] == "done after 4 steps"


def test_a_notification_is_accepted_with_202(client: httpx.Client) -> None:
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
    response = post(client, cancel, headers={"Content-Type": JSON, "Accept": BOTH})
    assert response.status_code == 202
    assert response.content == b""
    with_headers = post(client, cancel)
    assert with_headers.status_code == 202 and with_headers.content == b""


def test_session_headers_of_older_clients_are_ignored(client: httpx.Client) -> None:
    message = call("echo", {"text": "stateless"})
    headers = {**headers_for(message), "Mcp-Session-Id": "abc", "Last-Event-ID": "4"}
    response = post(client, message, headers)
    assert text_of(response) == "stateless"
    assert "mcp-session-id" not in response.headers


@pytest.mark.parametrize("path", ["/mcp", "/mcp/"])
def test_the_endpoint_path(http_base: str, path: str) -> None:
    message = call("echo", {"text": path})
    response = httpx.post(http_base + path, json=message, headers=headers_for(message))
    assert text_of(response) == path


@pytest.mark.parametrize("path", ["/", "/other", "/mcp/x"])
def test_other_paths_are_not_found(http_base: str, path: str) -> None:
    message = call("echo", {"text": "x"})
    response = httpx.post(http_base + path, json=message, headers=headers_for(message))
    assert response.status_code == 404


# --- refusals before the body ---------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH"])
def test_methods_other_than_post_get_405(client: httpx.Client, method: str) -> None:
    response = client.request(method, "", headers={"Accept": SSE})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_body_that_is_not_json_typed_gets_415(
    client: httpx.Client, content_type: str | None
) -> None:
    response = post(client, call("echo", {"text": "x"}), Content_Type=content_type)
    assert response.status_code == 415


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "Application/JSON"])
def test_json_content_types_with_parameters_or_other_case(
    client: httpx.Client, content_type: str
) -> None:
    response = post(client, call("echo", {"text": "typed"}), Content_Type=content_type)
    assert text_of(response) == "typed"


def test_a_body_over_the_limit_gets_413(client: httpx.Client) -> None:
    big = b" " * (4 * 1024 * 1024 + 1)
    message = call("echo", {"text": "x"})
    response = post(client, message, content=big)
    assert response.status_code == 413


def test_a_chunked_body_over_the_limit_gets_413(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(80):
            yield b" " * 65536

    message = call("echo", {"text": "x"})
    response = client.post("", content=chunks(), headers=headers_for(message))
    assert "content-length" not in response.request.headers
    assert response.status_code == 413


def test_a_body_just_under_the_limit_is_read(client: httpx.Client) -> None:
    message = call("echo", {"text": "padded"})
    body = json.dumps(message).encode()
    padded = body + b" " * (4 * 1024 * 1024 - len(body))
    assert text_of(post(client, message, content=padded)) == "padded"


def test_a_client_that_hangs_up_mid_body_does_not_hurt_the_server(http_base: str) -> None:
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{_port(http_base)}\r\n"
        f"Content-Type: {JSON}\r\nContent-Length: 1000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", _port(http_base)), timeout=5) as sock:
        sock.sendall(head.encode() + b'{"jsonrpc": "2.0", ')
    # The autouse check then proves the server still answers.


# --- DNS rebinding: Host and Origin ---------------------------------------------------


def _port(http_base: str) -> int:
    port = urlsplit(http_base).port
    assert port is not None
    return port


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io", "localhost.evil", ""]
)
def test_a_foreign_host_gets_421(client: httpx.Client, http_base: str, host: str) -> None:
    response = post(client, call("echo", {"text": "x"}), Host=host.format(port=_port(http_base)))
    assert response.status_code == 421


@pytest.mark.parametrize("host", ["localhost", "localhost:{port}", "127.0.0.1", "127.0.0.1:{port}"])
def test_local_hosts_are_accepted(client: httpx.Client, http_base: str, host: str) -> None:
    response = post(client, call("echo", {"text": "h"}), Host=host.format(port=_port(http_base)))
    assert text_of(response) == "h"


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "https://evil.example:{port}", "null", "http://localhost.evil"],
)
def test_a_foreign_origin_gets_403(client: httpx.Client, http_base: str, origin: str) -> None:
    response = post(
        client, call("echo", {"text": "x"}), Origin=origin.format(port=_port(http_base))
    )
    assert response.status_code == 403


@pytest.mark.parametrize(
    "origin", ["http://localhost", "http://localhost:{port}", "https://127.0.0.1:3000"]
)
def test_local_origins_are_accepted(client: httpx.Client, http_base: str, origin: str) -> None:
    response = post(
        client, call("echo", {"text": "o"}), Origin=origin.format(port=_port(http_base))
    )
    assert text_of(response) == "o"


def test_host_is_checked_before_the_method(client: httpx.Client) -> None:
    assert client.get("", headers={"Host": "evil.example"}).status_code == 421
    assert client.get("", headers={"Origin": "http://evil.example"}).status_code == 403


# --- JSON and the envelope --------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"", b'{"jsonrpc": "2.0", "id": 1, "method": ', b"\xff\xfe{}", b"[NaN]"],
)
def test_unparsable_bodies_get_400_and_parse_error(client: httpx.Client, content: bytes) -> None:
    response = post(client, call("echo", {"text": "x"}), content=content)
    body = error_of(response, 400, -32700)
    assert "id" not in body


def test_a_batch_is_an_invalid_request(client: httpx.Client) -> None:
    batch = [call("echo", {"text": "a"}), call("echo", {"text": "b"}, id=2)]
    response = post(client, batch, headers_for(batch[0]))
    error_of(response, 400, -32600)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": None, "method": "tools/list", "params": {}},
        {"jsonrpc": "1.0", "id": 1, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": 5, "params": {}},
        42,
    ],
    ids=["float-id", "bool-id", "null-id", "old-jsonrpc", "numeric-method", "not-an-object"],
)
def test_invalid_envelopes_get_400_and_invalid_request(client: httpx.Client, message: Any) -> None:
    wire = request("tools/list")
    if isinstance(message, dict):
        message["params"] = wire["params"]
    body = error_of(post(client, message, headers_for(wire)), 400, -32600)
    if isinstance(message, dict) and type(message["id"]) is int and message["id"] == 1:
        assert body["id"] == 1
    else:
        assert "id" not in body


def test_posted_responses_are_accepted_and_not_answered(client: httpx.Client) -> None:
    """A response has no business on this endpoint, but an empty result is still a result:
    both are taken (202, no body) and never answered as if they were requests."""
    for result in ({"x": 1}, {}):
        stray = {"jsonrpc": "2.0", "id": 5, "result": result}
        response = post(client, stray, headers={"Content-Type": JSON, "Accept": BOTH})
        assert (response.status_code, response.content) == (202, b""), result


@pytest.mark.parametrize("with_headers", [True, False])
def test_a_json_string_body_is_not_decoded_twice(client: httpx.Client, with_headers: bool) -> None:
    inner = call("echo", {"text": "smuggled"}, id=39)
    headers = headers_for(inner) if with_headers else {"Content-Type": JSON, "Accept": BOTH}
    response = post(client, None, headers, content=json.dumps(json.dumps(inner)).encode())
    assert "result" not in response.json(), "a JSON string body was run as a request"
    error_of(response, 400, -32600)


# --- protocol version and _meta -------------------------------------------------------


def test_a_missing_protocol_version_header_is_a_header_mismatch(client: httpx.Client) -> None:
    response = post(client, call("echo", {"text": "x"}, id=31), MCP_Protocol_Version=None)
    body = error_of(response, 400, -32020)
    assert body["id"] == 31


@pytest.mark.parametrize(
    ("header", "body_version"),
    [("2025-11-25", VERSION), (VERSION, "2025-11-25"), (VERSION, "v999.0.0"), ("", VERSION)],
)
def test_header_and_body_versions_must_agree(
    client: httpx.Client, header: str, body_version: str
) -> None:
    message = call("echo", {"text": "x"}, id=32)
    message["params"]["_meta"][PROTOCOL_VERSION] = body_version
    error_of(post(client, message, MCP_Protocol_Version=header), 400, -32020)


@pytest.mark.parametrize("version", ["1999-01-01", "2025-11-25", "v999.0.0"])
def test_an_unsupported_version_gets_32022_with_data(client: httpx.Client, version: str) -> None:
    message = call("echo", {"text": "x"}, id=33)
    message["params"]["_meta"][PROTOCOL_VERSION] = version
    body = error_of(post(client, message, MCP_Protocol_Version=version), 400, -32022)
    assert body["id"] == 33
    assert body["error"]["data"] == {"supported": [VERSION], "requested": version}


@pytest.mark.parametrize(
    "missing", ["_meta", PROTOCOL_VERSION, "io.modelcontextprotocol/clientCapabilities"]
)
def test_missing_meta_gets_400_and_invalid_params(client: httpx.Client, missing: str) -> None:
    message = call("echo", {"text": "x"}, id=34)
    if missing == "_meta":
        del message["params"]["_meta"]
    else:
        del message["params"]["_meta"][missing]
    body = error_of(post(client, message), 400, -32602)
    assert body["id"] == 34


def test_no_params_at_all_is_missing_meta(client: httpx.Client) -> None:
    message = {"jsonrpc": "2.0", "id": 35, "method": "tools/list"}
    error_of(post(client, message), 400, -32602)


# --- Mcp-Method and Mcp-Name ----------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        call("echo", {"text": "x"}, id=41),
        request("resources/read", {"uri": "data://greeting"}, id=41),
        request("prompts/get", {"name": "greet", "arguments": {"name": "x"}}, id=41),
        request("tools/list", id=41),
    ],
    ids=lambda m: m["method"],
)
@pytest.mark.parametrize(
    "overrides",
    [
        {"Mcp_Method": None},
        {"Mcp_Method": "tools/lis"},
        {"Mcp_Method": "prompts/list"},
        {"Mcp_Method": "TOOLS/CALL"},
        {"Mcp_Method": ""},
    ],
    ids=["method-missing", "method-other", "method-wrong", "method-upper", "method-empty"],
)
def test_mcp_method_must_match_the_body(
    client: httpx.Client, message: dict[str, Any], overrides: dict[str, str | None]
) -> None:
    body = error_of(post(client, message, headers_for(message, **overrides)), 400, -32020)
    assert body["id"] == 41


@pytest.mark.parametrize(
    "message",
    [
        call("echo", {"text": "x"}, id=42),
        request("resources/read", {"uri": "data://greeting"}, id=42),
        request("prompts/get", {"name": "greet", "arguments": {"name": "x"}}, id=42),
    ],
    ids=lambda m: m["method"],
)
@pytest.mark.parametrize("name", [None, "other", "ECHO", "data://GREETING", "Greet", ""])
def test_mcp_name_must_match_the_body(
    client: httpx.Client, message: dict[str, Any], name: str | None
) -> None:
    body = error_of(post(client, message, Mcp_Name=name), 400, -32020)
    assert body["id"] == 42


def test_header_names_are_case_insensitive(client: httpx.Client) -> None:
    message = call("echo", {"text": "cased"})
    headers = {
        "content-type": JSON,
        "ACCEPT": BOTH,
        "mcp-protocol-version": VERSION,
        "MCP-METHOD": "tools/call",
        "mcp-NAME": "echo",
    }
    assert text_of(post(client, message, headers)) == "cased"


def _raw_post(http_base: str, head: list[str], body: bytes) -> tuple[int, dict[str, Any]]:
    """A hand-written HTTP/1.1 request, so header whitespace reaches the server as written."""
    port = _port(http_base)
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"Content-Type: {JSON}",
        f"Accept: {BOTH}",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *head,
    ]
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head_bytes, _, payload = received.partition(b"\r\n\r\n")
    status = int(head_bytes.split(b" ", 2)[1])
    return status, json.loads(payload)


def test_whitespace_around_header_values_is_accepted(http_base: str) -> None:
    message = call("headed", {"region": "eu-west"}, id=43)
    status, body = _raw_post(
        http_base,
        [
            f"MCP-Protocol-Version:  {VERSION} ",
            "Mcp-Method: \t tools/call \t",
            "Mcp-Name:  headed ",
            "Mcp-Param-Region:   eu-west  ",
        ],
        json.dumps(message).encode(),
    )
    assert status == 200, body
    assert body["id"] == 43 and "result" in body


@pytest.mark.parametrize(
    "repeated",
    [
        [("Mcp-Name", "run_status"), ("Mcp-Name", "echo")],
        [("Mcp-Method", "tools/list"), ("Mcp-Method", "tools/call")],
        [("MCP-Protocol-Version", "2025-11-25"), ("MCP-Protocol-Version", VERSION)],
    ],
    ids=["name", "method", "version"],
)
def test_a_repeated_mirrored_header_is_a_mismatch(
    client: httpx.Client, repeated: list[tuple[str, str]]
) -> None:
    """An intermediary routing on the first value must not be bypassed by a second one."""
    message = call("echo", {"text": "x"}, id=46)
    names = {name.lower() for name, _ in repeated}
    headers = [(k, v) for k, v in headers_for(message).items() if k.lower() not in names]
    response = client.post("", json=message, headers=[*headers, *repeated])
    error_of(response, 400, -32020)


def test_whitespace_inside_a_header_value_is_not_trimmed(http_base: str) -> None:
    message = call("echo", {"text": "x"}, id=44)
    status, body = _raw_post(
        http_base,
        [f"MCP-Protocol-Version: {VERSION}", "Mcp-Method: tools/ call", "Mcp-Name: echo"],
        json.dumps(message).encode(),
    )
    assert status == 400 and body["error"]["code"] == -32020


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def test_mcp_name_may_be_base64_encoded(client: httpx.Client) -> None:
    message = call("echo", {"text": "b64"})
    assert text_of(post(client, message, Mcp_Name=_b64("echo"))) == "b64"


def test_a_non_ascii_uri_travels_as_base64_in_mcp_name(client: httpx.Client) -> None:
    message = request("resources/read", {"uri": "note://café/menu"}, id=45)
    response = post(client, message, Mcp_Name=_b64("note://café/menu"))
    assert response.status_code == 200, response.text
    assert response.json()["result"]["contents"][0]["text"] == "croissant"
    wrong = post(client, message, Mcp_Name=_b64("note://cafe/menu"))
    error_of(wrong, 400, -32020)


# --- Mcp-Param-* (conformance.md 4.13 and streamable-http.mdx) -------------------------


@pytest.mark.parametrize(
    ("region", "header", "accepted"),
    [
        ("Hello", "=?base64?SGVsbG8=?=", True),  # ServerAcceptsValidBase64
        ("Hello", "=?base64?SGVsbG8?=", False),  # ServerRejectsInvalidBase64Padding
        ("Hello", "=?base64?SGVs!!!bG8=?=", False),  # ServerRejectsInvalidBase64Chars
        ("SGVsbG8=", "SGVsbG8=", True),  # ServerLiteralMissingBase64Prefix
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8=", True),  # ServerLiteralMissingBase64Suffix
        ("test-value", None, False),  # ServerRejectsMissingCustomHeader
        ("Hello", "Hello", True),
        ("Hello", "hello", False),
        ("Hello", "=?BASE64?SGVsbG8=?=", False),  # the markers are case-sensitive
        (" padded ", _b64(" padded "), True),
        ("Grüße", _b64("Grüße"), True),
        ("Grüße", _b64("Grusse"), False),
        ("Hello", "=?base64?/w==?=", False),  # base64 of bytes that are not UTF-8
    ],
)
def test_mcp_param_string_headers(
    client: httpx.Client, region: str, header: str | None, accepted: bool
) -> None:
    message = call("headed", {"region": region}, id=51)
    response = post(client, message, Mcp_Param_Region=header)
    if accepted:
        body = response.json()
        assert response.status_code == 200, body
        assert json.loads(body["result"]["content"][0]["text"]) == {"region": region}
    else:
        assert error_of(response, 400, -32020)["id"] == 51


@pytest.mark.parametrize(
    ("arguments", "headers", "accepted"),
    [
        ({"region": "r", "count": 42}, {"Mcp_Param_Count": "42"}, True),
        ({"region": "r", "count": 42}, {"Mcp_Param_Count": "42.0"}, True),
        ({"region": "r", "count": 42}, {"Mcp_Param_Count": "43"}, False),
        ({"region": "r", "count": 42}, {"Mcp_Param_Count": "forty-two"}, False),
        ({"region": "r", "count": 42}, {}, False),
        ({"region": "r", "count": -7}, {"Mcp_Param_Count": "-7"}, True),
        # Compared exactly: through a float the first would round to the body's value.
        ({"region": "r", "count": 2**53 - 1}, {"Mcp_Param_Count": "9007199254740990.6"}, False),
        ({"region": "r", "count": 2**53 - 1}, {"Mcp_Param_Count": "9007199254740991.0"}, True),
        ({"region": "r", "count": 42}, {"Mcp_Param_Count": "4_2"}, False),
        ({"region": "r", "flag": True}, {"Mcp_Param_Flag": "true"}, True),
        ({"region": "r", "flag": False}, {"Mcp_Param_Flag": "false"}, True),
        ({"region": "r", "flag": True}, {"Mcp_Param_Flag": "True"}, False),
        ({"region": "r", "flag": True}, {"Mcp_Param_Flag": "1"}, False),
        ({"region": "r"}, {"Mcp_Param_Count": "5"}, True),  # no body value: header ignored
        ({"region": "r", "note": "n"}, {"Mcp_Param_Note": "other"}, True),  # not annotated
        ({"region": "r"}, {"Mcp_Param_Unknown": "x"}, True),
    ],
)
def test_mcp_param_integer_and_boolean_headers(
    client: httpx.Client, arguments: dict[str, Any], headers: dict[str, str], accepted: bool
) -> None:
    message = call("headed", arguments, id=52)
    response = post(client, message, headers_for(message, Mcp_Param_Region="r", **headers))
    if accepted:
        assert response.status_code == 200, response.text
        assert json.loads(response.json()["result"]["content"][0]["text"]) == arguments
    else:
        error_of(response, 400, -32020)


def test_mcp_param_header_names_are_case_insensitive(client: httpx.Client) -> None:
    message = call("headed", {"region": "eu"})
    headers = {**headers_for(message), "mcp-param-region": "eu"}
    assert text_of(post(client, message, headers)) == '{"region": "eu"}'
    headers = {**headers_for(message), "MCP-PARAM-REGION": "EU"}
    error_of(post(client, message, headers), 400, -32020)


def test_a_null_header_argument_needs_no_header(client: httpx.Client) -> None:
    response = post(client, call("headed", {"region": "r", "count": None}), Mcp_Param_Region="r")
    assert response.status_code == 200
    assert "error" not in response.json()  # the schema check makes it a tool error, not -32020


# --- errors with HTTP statuses --------------------------------------------------------


@pytest.mark.parametrize("method", ["no/such/method", "logging/setLevel", "initialize", "ping"])
def test_an_unknown_or_removed_method_gets_404(client: httpx.Client, method: str) -> None:
    body = error_of(post(client, request(method, id=61)), 404, -32601)
    assert body["id"] == 61


def test_a_missing_client_capability_gets_400_and_32021(client: httpx.Client) -> None:
    body = error_of(post(client, call("profile", {}, id=62)), 400, -32021)
    assert body["id"] == 62
    assert body["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_input_required_is_an_ordinary_200_answer(client: httpx.Client) -> None:
    message = call("profile", {}, id=63, capabilities={"elicitation": {}})
    response = post(client, message)
    assert response.status_code == 200
    validate_outgoing(response.json(), "tools/call")
    result = response.json()["result"]
    assert result["resultType"] == "input_required"
    assert sorted(result["inputRequests"]) == ["color", "name"]
    assert isinstance(result["requestState"], str)


def test_errors_after_the_header_checks_keep_their_status_mapping(client: httpx.Client) -> None:
    unknown_tool = post(client, call("no_such_tool", {}, id=64))
    assert error_of(unknown_tool, 400, -32602)["id"] == 64
    missing = post(client, request("resources/read", {"uri": "data://none"}, id=65))
    assert error_of(missing, 400, -32602)["error"]["data"] == {"uri": "data://none"}
    failed = post(client, call("add", {"a": "two", "b": 3}, id=66))
    assert failed.status_code == 200  # a tool execution error is a result, not an error
    assert failed.json()["result"]["isError"] is True


# --- subscriptions/listen -------------------------------------------------------------


def _open_subscriptions(client: httpx.Client) -> int:
    return int(text_of(post(client, call("open_subscriptions", {}))))


def test_a_listen_stream_gets_ack_then_list_changed(client: httpx.Client, http_url: str) -> None:
    before = _open_subscriptions(client)
    listen = request(
        "subscriptions/listen",
        {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["data://x"]}},
        id="listen-1",
    )
    with (
        httpx.Client(base_url=http_url, timeout=5) as streaming,
        streaming.stream("POST", "", json=listen, headers=headers_for(listen)) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"] == SSE
        events = _events(response.iter_lines())
        ack = next(events)
        validate_outgoing(ack, None)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: "listen-1"}
        assert ack["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourceSubscriptions": ["data://x"],
        }
        assert _open_subscriptions(client) == before + 1
        # Another request's progress must not leak onto the listen stream.
        post(client, call("progress", {"steps": 2}, progressToken="elsewhere"))
        assert text_of(post(client, call("touch_tools", {}))) != "0"
        changed = next(events)
        validate_outgoing(changed, None)
        assert changed == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {SUBSCRIPTION_ID: "listen-1"}},
        }
    deadline = time.monotonic() + 5
    while _open_subscriptions(client) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _open_subscriptions(client) == before, "closing the stream must end the subscription"


def _events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:])
        elif line == "" and data:
            assert len(data) == 1
            yield json.loads(data.pop())


@pytest.mark.parametrize("listen_id", ["", 0, "0", -3])
def test_the_subscription_id_is_the_listen_id_with_its_type(
    http_url: str, listen_id: int | str
) -> None:
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    listen["id"] = listen_id
    with (
        httpx.Client(base_url=http_url, timeout=5) as streaming,
        streaming.stream("POST", "", json=listen, headers=headers_for(listen)) as response,
    ):
        ack = next(_events(response.iter_lines()))
    found = ack["params"]["_meta"][SUBSCRIPTION_ID]
    assert found == listen_id and type(found) is type(listen_id)


def test_a_listen_stream_gets_updates_of_watched_resources(
    client: httpx.Client, http_url: str
) -> None:
    listen = request(
        "subscriptions/listen",
        {"notifications": {"resourceSubscriptions": ["file:///project/"]}},
        id=73,
    )
    with (
        httpx.Client(base_url=http_url, timeout=5) as streaming,
        streaming.stream("POST", "", json=listen, headers=headers_for(listen)) as response,
    ):
        events = _events(response.iter_lines())
        assert next(events)["params"]["notifications"] == {
            "resourceSubscriptions": ["file:///project/"]
        }
        unwatched = post(client, call("touch_resource", {"uri": "file:///projectX/a"}))
        assert text_of(unwatched) == "0"
        watched = post(client, call("touch_resource", {"uri": "file:///project/src/a.py"}))
        assert text_of(watched) == "1"
        updated = next(events)
        validate_outgoing(updated, None)
        assert updated["params"] == {
            "_meta": {SUBSCRIPTION_ID: 73},
            "uri": "file:///project/src/a.py",
        }


@pytest.mark.parametrize("params", [{}, {"notifications": "all"}, {"notifications": []}])
def test_a_listen_request_without_a_filter_is_invalid(
    client: httpx.Client, params: dict[str, Any]
) -> None:
    body = error_of(post(client, request("subscriptions/listen", params, id=74)), 400, -32602)
    assert body["id"] == 74


def test_a_listen_stream_only_carries_what_was_asked_for(
    client: httpx.Client, http_url: str
) -> None:
    listen = request(
        "subscriptions/listen",
        {"notifications": {"promptsListChanged": True, "toolsListChanged": False}},
        id=71,
    )
    with (
        httpx.Client(base_url=http_url, timeout=5) as streaming,
        streaming.stream("POST", "", json=listen, headers=headers_for(listen)) as response,
    ):
        events = _events(response.iter_lines())
        ack = next(events)
        assert ack["params"] == {
            "_meta": {SUBSCRIPTION_ID: 71},
            "notifications": {"promptsListChanged": True},
        }
        assert text_of(post(client, call("touch_tools", {}))) == "0"


def test_a_listen_request_that_accepts_only_json_gets_406(client: httpx.Client) -> None:
    """A listen stream is SSE or nothing: a client that takes JSON only cannot read it."""
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=72)
    response = post(client, listen, Accept=JSON)
    assert response.status_code == 406
    assert response.text == "subscriptions/listen needs text/event-stream"


def test_closing_the_stream_cancels_the_request(http_url: str, client: httpx.Client) -> None:
    tag = f"disconnect-{time.monotonic_ns()}"
    message = call("slow", {"seconds": 5, "tag": tag}, id=81)

    def status() -> str:
        return text_of(post(client, call("run_status", {"tag": tag})))

    async def start_and_hang_up() -> None:
        async with httpx.AsyncClient(base_url=http_url, timeout=10) as session:
            pending = asyncio.ensure_future(
                session.post("", json=message, headers=headers_for(message))
            )
            deadline = time.monotonic() + 3
            while await asyncio.to_thread(status) != "started":
                assert time.monotonic() < deadline, "the slow tool never started"
                await asyncio.sleep(0.02)
            pending.cancel()  # drops the connection: the only way to cancel over HTTP
            with contextlib.suppress(asyncio.CancelledError):
                await pending

    asyncio.run(start_and_hang_up())
    deadline = time.monotonic() + 3
    while (found := status()) == "started":
        assert time.monotonic() < deadline, "the request was not cancelled on disconnect"
        time.sleep(0.05)
    assert found == "cancelled"


def test_discover_over_http(client: httpx.Client) -> None:
    response = post(client, request("server/discover", id=91))
    body = response.json()
    validate_outgoing(body, "server/discover")
    assert body["result"]["supportedVersions"] == [VERSION]
    assert set(body["result"]["capabilities"]) >= {"tools", "resources", "prompts", "logging"}


# --- the command line: several workers, any path ------------------------------------------


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_workers_share_rounds_and_any_path_is_served() -> None:
    """``--workers 2 --path ''``: an MRTR flow completes whichever worker takes each round."""
    workers: set[int] = set()
    unshared = ("--unshared-legacy-sessions", "--unshared-replay-guard")  # no replay here
    with http_server("--workers", "2", "--path", "", *unshared) as server:
        base = server.base
        with httpx.Client(base_url=base, timeout=10) as session:
            for path in ("/", "/mcp", "/anything/at/all"):
                message = call("echo", {"text": path})
                answer = session.post(path, json=message, headers=headers_for(message))
                assert text_of(answer) == path
            for _ in range(4):
                first = call("profile", {}, capabilities={"elicitation": {}})
                interim = session.post("/", json=first, headers=headers_for(first)).json()
                retry = call("profile", {}, id=2, capabilities={"elicitation": {}})
                retry["params"]["requestState"] = interim["result"]["requestState"]
                retry["params"]["inputResponses"] = {
                    "name": {"action": "accept", "content": {"name": "W"}},
                    "color": {"action": "accept", "content": {"color": "red"}},
                }
                done = session.post("/", json=retry, headers=headers_for(retry))
                assert text_of(done) == "name=W color=red rounds=2"
        workers = _children(server.process.pid)
        assert len(workers) >= 2
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers), "worker processes outlived the server"
