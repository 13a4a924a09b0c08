"""A server whose tools leave out what results and listings may leave out, for the
client's result tests: ``python -m snodo run tests/client/results_server.py:server``."""

from __future__ import annotations

from pydantic import BaseModel

from snodo import Server, tool_error

server = Server("results", "1.0.0")


class Sum(BaseModel):
    total: int


@server.tool
def echo(text: str) -> str:
    """No output schema, no structured content, no isError."""
    return text


@server.tool(annotations={"readOnlyHint": True})
def add(a: int, b: int) -> Sum:
    """An output schema and structured content."""
    return Sum(total=a + b)


@server.tool
def fail() -> object:
    """isError: true."""
    return tool_error("it failed")
