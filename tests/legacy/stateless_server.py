"""A server that keeps no legacy sessions (``legacy="stateless"``), for tests/legacy.

snodo run tests/legacy/stateless_server.py:server --transport http --port PORT
"""

from __future__ import annotations

from typing import Annotated

from snodo import Ask, Context, Server, elicitation

server = Server("stateless", "1.0.0", legacy="stateless")
CITY = elicitation.form(
    "Which city?",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@server.tool
async def echo(text: str, ctx: Context) -> str:
    """Says ``text`` back, after a progress report and a log line."""
    ctx.report_progress(1, 1, "echoing")
    ctx.log("info", "echoed")
    return text


@server.tool
def weather(city: Annotated[str | None, Ask(CITY, pick="city")]) -> str:
    """Asks the user for a city: nothing a stateless legacy session can do."""
    return f"sunny in {city}"


@server.resource("note://asks", mime_type="text/plain")
def note(city: Annotated[str | None, Ask(CITY, pick="city")]) -> str:
    """A resource that asks first."""
    return f"a note about {city}"
