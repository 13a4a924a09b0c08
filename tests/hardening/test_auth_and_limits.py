"""Authentication through HTTP, and the documented limits, against real processes."""

from __future__ import annotations

import json
from typing import Any

import httpx

from snodo.core import jsonrpc
from snodo.core.http_headers import request_headers
from snodo.core.state import MAX_TOKEN_LENGTH
from tests.support.wire import meta

META = meta({"elicitation": {}})


def _call(
    url: str, params: dict[str, Any], token: str | None = None, rid: int = 1
) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"_meta": META, **params},
    }
    headers = {
        "content-type": "application/json",
        **request_headers("tools/call", body["params"], "2026-07-28"),
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_requests_without_valid_credentials_get_401(auth_url: str) -> None:
    for token in (None, "wrong"):
        response = _call(auth_url, {"name": "whoami"}, token)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith('Bearer realm="hardening"')


def test_the_principal_reaches_handlers(auth_url: str) -> None:
    response = _call(auth_url, {"name": "whoami"}, "token-alice")
    assert response.json()["result"]["content"] == [{"type": "text", "text": "alice"}]


def test_state_sealed_for_one_principal_never_opens_for_another(auth_url: str) -> None:
    first = _call(auth_url, {"name": "guarded"}, "token-alice").json()["result"]
    retry = {
        "name": "guarded",
        "requestState": first["requestState"],
        "inputResponses": {"name": {"action": "accept", "content": {"name": "A"}}},
    }
    stolen = _call(auth_url, retry, "token-bob")
    assert stolen.status_code == 400
    assert stolen.json()["error"] == {"code": -32602, "message": "Invalid request state"}
    own = _call(auth_url, retry, "token-alice").json()["result"]
    assert own["content"][0]["text"] == "hello A ({'round': 1})"


def test_body_limit_and_the_server_keeps_serving(http_url: str) -> None:
    huge = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"' + b"a" * (5 << 20) + b'"}}'
    )
    response = httpx.post(
        http_url, content=huge, timeout=30, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert _call(http_url, {"name": "invocation_count"}).status_code == 200


def test_token_size_limit(http_url: str) -> None:
    oversized = "v1." + "a" * MAX_TOKEN_LENGTH
    response = _call(http_url, {"name": "guarded", "requestState": oversized})
    assert response.json()["error"] == {"code": -32602, "message": "Invalid request state"}


def test_nesting_depth_limit(http_url: str) -> None:
    deep: Any = "x"
    for _ in range(jsonrpc.MAX_DEPTH + 5):
        deep = [deep]
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"_meta": META, "name": "guarded", "arguments": {"note": deep}},
    }
    headers = {
        "content-type": "application/json",
        **request_headers("tools/call", body["params"], "2026-07-28"),
    }
    response = httpx.post(http_url, content=json.dumps(body), headers=headers, timeout=10)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
    assert _call(http_url, {"name": "invocation_count"}).status_code == 200
