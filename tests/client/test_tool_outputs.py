"""``call_tool(..., outputs=[...])``: ``requestedOutputs`` sent to a server that speaks
SEP-3279's draft (and never to one that does not), its ``outputs`` read back into the
result the client returns for every revision, each structured output checked against
its own variant's schema."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from snodo.client import Client, OutputMismatch, RequestError
from snodo.client.transports import MemoryTransport
from snodo.server import Server, Spec
from tests.client.hostile import Scripted

DRAFT, MODERN = "2026-12-01", "2026-07-28"


class Region(BaseModel):
    name: str
    customers: int


class Regions(BaseModel):
    regions: list[Region]


def _server(*versions: str) -> Server:
    server = Server("crm", "1.0", versions=list(versions), spec=Spec(check_answers=True))

    @server.tool
    def regions() -> Regions:
        """Customers by region."""
        return Regions(regions=[Region(name="NA", customers=37)])

    @server.tool
    def greet(name: str) -> str:
        return f"hello {name}"

    return server


class Recorded(MemoryTransport):
    """The server in process, each request and response kept as the wire carries it."""

    def __init__(self, server: Server) -> None:
        super().__init__(server)
        self.wire: list[tuple[dict[str, Any], dict[str, Any]]] = []

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: Any
    ) -> dict[str, Any]:
        response = await super().request(message, headers, on_notification)
        self.wire.append((json.loads(json.dumps(message)), response))
        return response


def _calls(transport: Recorded) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(m["params"], r) for m, r in transport.wire if m["method"] == "tools/call"]


def _run(server: Server, versions: list[str], **call: Any) -> tuple[Any, Recorded]:
    transport = Recorded(server)

    async def main() -> Any:
        async with Client(transport, versions=versions, era="modern") as client:
            await client.list_tools()
            return await client.call_tool(**call)

    return asyncio.run(main()), transport


STRUCTURED = {"regions": [{"name": "NA", "customers": 37}]}
MIRROR = json.dumps(STRUCTURED)


def test_requested_outputs_go_to_a_draft_server_and_outputs_read_back() -> None:
    server = _server(DRAFT, MODERN)
    outputs = [("assistant", "structured")]
    result, transport = _run(server, [DRAFT, MODERN], name="regions", outputs=outputs)
    ((params, response),) = _calls(transport)
    assert params["requestedOutputs"] == [{"audience": "assistant", "format": "structured"}]
    assert params["_meta"]["io.modelcontextprotocol/protocolVersion"] == DRAFT
    assert response["result"]["outputs"] == [
        {"audience": "assistant", "format": "structured", "structuredContent": STRUCTURED}
    ]
    assert "content" not in response["result"]
    assert result.structured_content == STRUCTURED
    assert result.content == []
    assert result.outputs == response["result"]["outputs"]
    assert server.answer_checks is not None and server.answer_checks.invalid == []


def test_both_outputs_read_as_content_and_structured_content() -> None:
    server = _server(DRAFT, MODERN)
    outputs = [{"audience": "assistant", "format": "content"}, ("assistant", "structured")]
    result, transport = _run(server, [DRAFT], name="regions", outputs=outputs)
    assert [block.text for block in result.content] == [MIRROR]
    assert result.structured_content == STRUCTURED
    ((params, _),) = _calls(transport)
    assert params["requestedOutputs"] == [
        {"audience": "assistant", "format": "content"},
        {"audience": "assistant", "format": "structured"},
    ]


def test_without_outputs_nothing_is_requested_and_the_fallback_reads_as_content() -> None:
    result, transport = _run(_server(DRAFT), [DRAFT], name="greet", arguments={"name": "Ada"})
    ((params, response),) = _calls(transport)
    assert "requestedOutputs" not in params
    assert response["result"]["outputs"] == [
        {
            "audience": "assistant",
            "format": "content",
            "content": [{"type": "text", "text": "hello Ada"}],
        }
    ]
    assert [block.text for block in result.content] == ["hello Ada"]


def test_a_server_without_the_draft_is_sent_no_requested_outputs() -> None:
    """The client speaks the draft; the server only 2026-07-28: it settles there, sends
    no ``requestedOutputs`` (the SEP forbids it), and reads the content shape."""
    server = _server(MODERN)
    outputs = [("assistant", "structured")]
    result, transport = _run(server, [DRAFT, MODERN], name="regions", outputs=outputs)
    ((params, response),) = _calls(transport)[-1:]
    assert params["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
    assert "requestedOutputs" not in params
    assert response["result"]["structuredContent"] == STRUCTURED
    assert result.structured_content == STRUCTURED
    assert [block.text for block in result.content] == [MIRROR]


def test_an_output_the_tool_does_not_declare_is_refused_by_the_server() -> None:
    with pytest.raises(RequestError) as refused:
        _run(
            _server(DRAFT),
            [DRAFT],
            name="greet",
            arguments={"name": "Ada"},
            outputs=[("programmatic", "structured")],
        )
    assert refused.value.code == -32602
    assert "declares no output programmatic/structured" in str(refused.value)


def test_a_selector_that_is_no_pair_is_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="is not an \\(audience, format\\) pair"):
        _run(_server(DRAFT), [DRAFT], name="greet", outputs=["assistant"])


def test_a_structured_output_is_checked_against_its_own_variant_schema() -> None:
    counted = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    listing = {
        "result": {
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "tools": [
                {
                    "name": "count",
                    "inputSchema": {"type": "object"},
                    "outputVariants": [
                        {"audience": "assistant", "format": "content"},
                        {"audience": "assistant", "format": "structured", "schema": counted},
                    ],
                }
            ],
        }
    }
    outputs = [
        {"audience": "assistant", "format": "structured", "structuredContent": {"n": "many"}}
    ]
    called = {"result": {"resultType": "complete", "outputs": outputs}}

    async def main() -> Any:
        transport = Scripted(listing, called)
        client = Client(transport, versions=[DRAFT], era="modern")
        await client.list_tools()
        return await client.call_tool("count", outputs=[("assistant", "structured")])

    with pytest.raises(OutputMismatch) as raised:
        asyncio.run(main())
    assert str(raised.value) == (
        "tool count sent its assistant structured output outside its variant schema: "
        '"many" is not of type "integer" at /n'
    )


def test_a_draft_result_in_the_old_shape_is_a_protocol_violation() -> None:
    """Under the draft, ``content`` without ``outputs`` is not a CallToolResult."""
    from snodo.client import ProtocolViolation

    called = {"result": {"resultType": "complete", "content": []}}

    async def main() -> Any:
        client = Client(Scripted(called), versions=[DRAFT], era="modern")
        return await client.call_tool("count")

    with pytest.raises(ProtocolViolation, match="does not fit revision 2026-12-01"):
        asyncio.run(main())
