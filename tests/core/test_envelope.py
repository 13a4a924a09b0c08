"""snodo.core.envelope: what every request of the current revision must carry (a JSON-RPC
object, its version, an id, params as an object, the required ``_meta``) and how a
method it does not serve is named, as literal wire round-trips through a server."""

from __future__ import annotations

from typing import Any

import pytest

from snodo.server import Server
from tests.support.wire import VERSION, answer, call, meta, request


def build() -> Server:
    server = Server("test-server", "1.0.0")

    @server.tool
    def echo(text: str) -> str:
        return text

    return server


SERVER = build()
PREFIX = "io.modelcontextprotocol/"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            b"{not json",
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error: invalid JSON"}},
        ),
        (
            b"[]",
            {
                "jsonrpc": "2.0",
                "error": {"code": -32600, "message": "Invalid request: not a JSON-RPC object"},
            },
        ),
        (
            {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
            {
                "jsonrpc": "2.0",
                "id": 1,
                "error": {"code": -32600, "message": 'Invalid request: jsonrpc must be "2.0"'},
            },
        ),
        (
            {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
            {
                "jsonrpc": "2.0",
                "error": {
                    "code": -32600,
                    "message": "Invalid request: id must be a string or an integer",
                },
            },
        ),
        (
            {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
            {
                "jsonrpc": "2.0",
                "error": {
                    "code": -32600,
                    "message": "Invalid request: id must be a string or an integer",
                },
            },
        ),
        (
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": [1]},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "error": {"code": -32600, "message": "Invalid request: params must be an object"},
            },
        ),
        (
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {"code": -32602, "message": "Missing required params._meta"},
            },
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
            },
            {
                "jsonrpc": "2.0",
                "id": 4,
                "error": {
                    "code": -32602,
                    "message": f"Missing required _meta field {PREFIX}protocolVersion",
                },
            },
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
            },
            {
                "jsonrpc": "2.0",
                "id": 5,
                "error": {
                    "code": -32602,
                    "message": f"Missing required _meta field {PREFIX}clientCapabilities",
                },
            },
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "v999",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            },
            {
                "jsonrpc": "2.0",
                "id": 6,
                "error": {
                    "code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": ["2026-07-28"], "requested": "v999"},
                },
            },
        ),
        (
            request("tools/call", {"arguments": {}}, id=7),
            {
                "jsonrpc": "2.0",
                "id": 7,
                "error": {"code": -32602, "message": "Invalid params: name: Field required"},
            },
        ),
    ],
)
def test_malformed_input(message: Any, expected: dict[str, Any]) -> None:
    assert answer(SERVER, message) == expected


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
        "sampling/createMessage",
    ],
)
def test_removed_and_unknown_methods(method: str) -> None:
    """The message names the method and the protocol version the request named."""
    assert answer(SERVER, request(method, id=9)) == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {
            "code": -32601,
            "message": f"Method not found: {method} (protocol version {VERSION})",
        },
    }


def test_notifications_get_no_answer() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert call(SERVER, note).response is None


def test_meta_with_unknown_keys_and_no_client_info_is_served() -> None:
    message = request("tools/list", **{"com.example/trace": "abc"})
    assert "result" in answer(SERVER, message)
    assert meta()["io.modelcontextprotocol/clientCapabilities"] == {}
