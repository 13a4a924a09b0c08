"""Servers the publishing tests serve: one protected by OAuth, whose card is public."""

from __future__ import annotations

from snodo import Publishing, Server
from snodo.auth.protected import ProtectedResource
from snodo.auth.tokens import AccessToken, InvalidToken


class Refusing:
    """A verifier no token passes: only what needs no authentication is answered."""

    async def verify(self, token: str) -> AccessToken:
        raise InvalidToken("no token is valid here")


protected = Server(
    "notes",
    "1.0.0",
    description="Notes, for signed-in users.",
    publishing=Publishing(card_name="com.example/notes"),
    authorization=ProtectedResource(
        "http://127.0.0.1/mcp", ["https://auth.example.com"], Refusing()
    ),
)


@protected.tool
def note() -> str:
    """A note."""
    return "a note"
