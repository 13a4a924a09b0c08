"""A dependency with a parameter nothing provides."""

import secrets
from typing import Annotated

from snodo import Depends, Server

server = Server("broken", "1.0.0", state_secret=secrets.token_bytes(32))


def database(url: str) -> str:
    return url


@server.tool
def count(db: Annotated[str, Depends(database)]) -> int:
    return len(db)
