"""An asked parameter the user may decline, annotated without ``| None``."""

import secrets
from typing import Annotated

from snodo import Ask, Server, elicitation

server = Server("broken", "1.0.0", state_secret=secrets.token_bytes(32))
NAME = elicitation.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)


@server.tool
def greet(name: Annotated[str, Ask(NAME, pick="name")]) -> str:
    return name
