"""SEP-3279's draft (2026-12-01) for tools whose output is not inferred from a return
type: an output schema declared with ``output_schema=`` (on the decorator, or
``add_tool`` of a function with no annotation at all) is the ``assistant/structured``
variant, as it is; a tool answering media (an image, an image and text, a resource
link) declares ``assistant/content`` alone and answers its blocks in that output. On
the literal wire beside 2026-07-28's answers, every answer checked against its
revision, and read back by snodo's client."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from snodo import Image, link
from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.server import Server, Spec
from tests.support.variants import DRAFT, MODERN, asked, wire

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
SCHEMA = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}


def _server() -> Server:
    server = Server("m", "1", versions=[DRAFT, MODERN], spec=Spec(check_answers=True))

    @server.tool(output_schema=SCHEMA)
    def count():  # type: ignore[no-untyped-def]  # on purpose: no annotation to infer from
        """Counts."""
        return {"total": 3}

    def tally(unit):  # type: ignore[no-untyped-def]  # on purpose: nothing annotated
        return {"total": 4}

    server.add_tool(tally, name="tally", output_schema=SCHEMA)

    @server.tool
    def chart() -> Image:
        """A chart."""
        return Image(data=PNG)

    @server.tool
    def captioned() -> list[Any]:
        """A chart and its caption."""
        return [Image(data=PNG), "Sales by region"]

    @server.tool
    def report() -> Any:
        """Where the report is."""
        return link("file:///reports/q3.txt", name="q3")

    return server


INFO = '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"1"}}'
NO_INPUT = '"inputSchema":{"additionalProperties":false,"properties":{},"type":"object"}'
SCHEMA_JSON = json.dumps(SCHEMA, separators=(",", ":"))
CONTENT = '{"audience":"assistant","format":"content"}'
STRUCTURED = f'{{"audience":"assistant","format":"structured","schema":{SCHEMA_JSON}}}'
IMAGE = f'{{"type":"image","data":"{base64.b64encode(PNG).decode()}","mimeType":"image/png"}}'


def _outputs(outputs: str) -> str:
    result = f'{{"resultType":"complete","outputs":{outputs},{INFO}}}'
    return f'{{"jsonrpc":"2.0","id":1,"result":{result}}}'


def test_declared_schemas_and_media_tools_are_listed_with_their_variants() -> None:
    tally_input = (
        '"inputSchema":{"additionalProperties":false,"properties":{"unit":{}},'
        '"required":["unit"],"type":"object"}'
    )
    assert wire(_server(), "tools/list", {}) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":['
        f'{{"name":"count","description":"Counts.",{NO_INPUT},"outputVariants":[{CONTENT},{STRUCTURED}]}},'
        f'{{"name":"tally",{tally_input},"outputVariants":[{CONTENT},{STRUCTURED}]}},'
        f'{{"name":"chart","description":"A chart.",{NO_INPUT},"outputVariants":[{CONTENT}]}},'
        f'{{"name":"captioned","description":"A chart and its caption.",{NO_INPUT},'
        f'"outputVariants":[{CONTENT}]}},'
        f'{{"name":"report","description":"Where the report is.",{NO_INPUT},'
        f'"outputVariants":[{CONTENT}]}}],"ttlMs":0,"cacheScope":"private",{INFO}}}}}'
    )
    modern = json.loads(wire(_server(), "tools/list", {}, MODERN))["result"]["tools"]
    assert [tool.get("outputSchema") for tool in modern] == [SCHEMA, SCHEMA, None, None, None]


def test_a_declared_schemas_value_is_the_structured_output_as_it_is() -> None:
    server = _server()
    both = asked(("assistant", "structured"), ("assistant", "content"))
    assert wire(server, "tools/call", {"name": "count", "requestedOutputs": both}) == _outputs(
        '[{"audience":"assistant","format":"structured","structuredContent":{"total":3}},'
        '{"audience":"assistant","format":"content","content":[{"type":"text","text":'
        '"{\\"total\\": 3}"}]}]'
    )
    tally = {"name": "tally", "arguments": {"unit": "box"}}
    assert wire(server, "tools/call", {**tally, "requestedOutputs": both[:1]}) == _outputs(
        '[{"audience":"assistant","format":"structured","structuredContent":{"total":4}}]'
    )
    modern = json.loads(wire(server, "tools/call", tally, MODERN))["result"]
    assert modern["structuredContent"] == {"total": 4}


def test_media_is_answered_in_the_content_output() -> None:
    server = _server()
    assert wire(server, "tools/call", {"name": "chart"}) == _outputs(
        f'[{{"audience":"assistant","format":"content","content":[{IMAGE}]}}]'
    )
    assert wire(server, "tools/call", {"name": "captioned"}) == _outputs(
        f'[{{"audience":"assistant","format":"content","content":[{IMAGE},'
        '{"type":"text","text":"Sales by region"}]}]'
    )
    assert wire(server, "tools/call", {"name": "report"}) == _outputs(
        '[{"audience":"assistant","format":"content","content":[{"type":"resource_link",'
        '"uri":"file:///reports/q3.txt","name":"q3"}]}]'
    )
    structured = {"name": "chart", "requestedOutputs": asked(("assistant", "structured"))}
    assert wire(server, "tools/call", structured) == (
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Tool chart declares no output '
        'assistant/structured (it declares assistant/content)"}}'
    )
    assert wire(server, "tools/call", {"name": "chart"}, MODERN) == (
        f'{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","content":[{IMAGE}],{INFO}}}}}'
    )


def test_snodos_client_reads_the_media_and_the_declared_structure_back() -> None:
    server = _server()

    async def run() -> tuple[Any, Any]:
        async with Client(MemoryTransport(server), versions=[DRAFT], era="modern") as client:
            await client.list_tools()
            chart = await client.call_tool("captioned", {})
            counted = await client.call_tool("count", {}, outputs=[("assistant", "structured")])
            return chart, counted

    chart, counted = asyncio.run(run())
    assert [block.type for block in chart.content] == ["image", "text"]
    assert base64.b64decode(chart.content[0].data) == PNG
    assert counted.structured_content == {"total": 3}
    assert counted.outputs == [
        {"audience": "assistant", "format": "structured", "structuredContent": {"total": 3}}
    ]
    assert server.answer_checks is not None and server.answer_checks.invalid == []
