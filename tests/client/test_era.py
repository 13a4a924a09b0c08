"""The era rules and the result filling, without I/O: literal responses in, verdicts out."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.client.era import (
    UnsupportedServer,
    is_modern_error,
    named_versions,
    read_probe,
)
from snodo.client.results import complete_result
from snodo_wire import CallToolResult, DiscoverResult, ReadResourceResult
from tests.support.strategies import json_values

MODERN = "2026-07-28"


def error(code: int, message: str = "m", data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": 1, "error": body}


DISCOVERED = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "public",
        "supportedVersions": [MODERN],
        "capabilities": {},
    },
}


def test_a_discover_result_is_modern() -> None:
    assert read_probe(DISCOVERED, MODERN, "auto") == ("modern", MODERN)


def test_unsupported_version_is_modern_with_a_version_from_its_list() -> None:
    refused = error(-32022, "Unsupported protocol version", {"supported": [MODERN, "2025-11-25"]})
    assert read_probe(refused, "2027-01-01", "auto") == ("modern", MODERN)


@pytest.mark.parametrize("code", [-32601, -32602, -32600, -32603, -32000, 0])
def test_any_other_error_is_legacy_whatever_its_code(code: int) -> None:
    assert read_probe(error(code), MODERN, "auto") == ("legacy", MODERN)


def test_a_dual_era_server_without_our_modern_version_is_legacy_on_auto() -> None:
    refused = error(-32022, "no", {"supported": ["2027-01-01", "2025-11-25"]})
    assert read_probe(refused, MODERN, "auto") == ("legacy", MODERN)


def test_no_version_in_common_is_a_typed_error_naming_the_servers() -> None:
    refused = error(-32022, "no", {"supported": ["2027-01-01"]})
    with pytest.raises(UnsupportedServer) as info:
        read_probe(refused, MODERN, "auto")
    assert info.value.supported == ["2027-01-01"]
    assert "server supports: 2027-01-01" in str(info.value)


def test_modern_errors_are_the_three_modern_codes_only() -> None:
    assert [c for c in (-32020, -32021, -32022, -32600, -32601) if is_modern_error(error(c))] == [
        -32020,
        -32021,
        -32022,
    ]
    assert not is_modern_error({"error": {"code": -32022}})  # not JSON-RPC 2.0
    assert not is_modern_error("Bad Request")
    assert named_versions(error(-32022, data={"supported": ["a", "b"]})) == ["a", "b"]
    assert named_versions(error(-32022, data={"supported": "a"})) == []


@given(json_values)
def test_the_probe_reader_raises_only_its_typed_error_on_arbitrary_json(value: Any) -> None:
    try:
        era, version = read_probe(value, MODERN, "auto")
    except UnsupportedServer as refused:
        assert MODERN not in refused.supported
    else:
        assert era in ("modern", "legacy") and version == MODERN


def test_a_legacy_result_is_filled_the_documented_way() -> None:
    read = complete_result(
        ReadResourceResult, {"contents": [{"uri": "a://b", "text": "t", "mimeType": "text/plain"}]}
    )
    assert read.model_dump(mode="json", by_alias=True) == {
        "contents": [{"uri": "a://b", "text": "t", "mimeType": "text/plain"}],
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
    }
    # Only fields the model has are filled; what the server sent is kept.
    call = complete_result(CallToolResult, {"content": [], "isError": True})
    assert call.model_dump(mode="json", by_alias=True) == {
        "content": [],
        "isError": True,
        "resultType": "complete",
    }
    found = complete_result(
        DiscoverResult,
        {"supportedVersions": [MODERN], "capabilities": {}, "ttlMs": 5, "cacheScope": "public"},
    )
    assert (found.ttl_ms, found.cache_scope, found.result_type) == (5, "public", "complete")


@given(st.sampled_from(["complete", "input_required"]))
def test_a_result_type_the_server_sent_is_never_overwritten(kind: str) -> None:
    assert complete_result(CallToolResult, {"content": [], "resultType": kind}).result_type == kind
