"""What the client checks of what a server sends, and of what its own handlers answer:
structuredContent against the listed outputSchema, icons from safe schemes only, an
accepted form against its schema, roots as file:// URIs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from snodo.client import Client, OutputMismatch
from tests.client.hostile import Scripted

COUNTED = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def listing(**tool: Any) -> dict[str, Any]:
    defined = {"name": "count", "inputSchema": {"type": "object"}, **tool}
    return {"result": {"resultType": "complete", "tools": [defined]}}


def called(**result: Any) -> dict[str, Any]:
    return {"result": {"resultType": "complete", "content": [], **result}}


def run_tool(*responses: dict[str, Any]) -> Any:
    async def main() -> Any:
        client = Client(Scripted(*responses), era="modern")
        await client.list_tools()
        return await client.call_tool("count")

    return asyncio.run(main())


def test_structured_content_outside_the_listed_schema_is_refused_naming_where() -> None:
    with pytest.raises(OutputMismatch) as raised:
        run_tool(listing(outputSchema=COUNTED), called(structuredContent={"n": "many"}))
    assert str(raised.value) == (
        'tool count sent structuredContent outside its outputSchema: "many" is not of type'
        ' "integer" at /n'
    )


def test_a_declared_schema_with_no_structured_content_is_refused() -> None:
    with pytest.raises(
        OutputMismatch, match="declares an outputSchema but sent no structuredContent"
    ):
        run_tool(listing(outputSchema=COUNTED), called())


def test_a_result_that_fits_and_an_error_result_pass() -> None:
    good = run_tool(listing(outputSchema=COUNTED), called(structuredContent={"n": 3}))
    assert good.structured_content == {"n": 3}
    failed = run_tool(listing(outputSchema=COUNTED), called(isError=True))
    assert failed.is_error is True


def test_icons_from_unsafe_schemes_are_dropped() -> None:
    icons = [
        {"src": "https://example.com/a.png"},
        {"src": "data:image/png;base64,iVBORw0KGgo="},
        {"src": "http://example.com/plain.png"},
        {"src": "javascript:alert(1)"},
        {"src": "file:///etc/passwd"},
    ]

    async def main() -> Any:
        client = Client(Scripted(listing(icons=icons)), era="modern")
        return await client.list_tools()

    (tool,) = asyncio.run(main())
    assert [icon.src for icon in tool.icons] == [
        "https://example.com/a.png",
        "data:image/png;base64,iVBORw0KGgo=",
    ]


FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "How many?",
        "requestedSchema": COUNTED,
    },
}
ASKING = {
    "result": {"resultType": "input_required", "inputRequests": {"k": FORM}, "requestState": "s"}
}


def test_a_handler_answer_that_does_not_fit_the_form_never_leaves() -> None:
    transport = Scripted(ASKING, called())

    def user(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"n": "three"}}

    async def main() -> None:
        client = Client(transport, era="modern", elicitation=user)
        await client.call_tool("count")

    with pytest.raises(ValueError, match="does not fit the form") as raised:
        asyncio.run(main())
    assert "three" not in str(raised.value)  # the reason, never the value
    assert len(transport.sent) == 1  # the answer was not sent


def test_a_roots_handler_must_answer_file_uris() -> None:
    asking = {
        "result": {
            "resultType": "input_required",
            "inputRequests": {"r": {"method": "roots/list"}},
            "requestState": "s",
        }
    }
    transport = Scripted(asking, called())

    def roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": "https://example.com/repo"}]}

    async def main() -> None:
        await Client(transport, era="modern", roots=roots).call_tool("count")

    with pytest.raises(ValueError, match="not a file:// URI"):
        asyncio.run(main())
    assert len(transport.sent) == 1
