"""A lifespan written as a plain generator: the decorator forgotten."""

import secrets
from collections.abc import Iterator
from typing import Any

from snodo import Server


def pool(server: Any) -> Iterator[dict[str, int]]:
    yield {"connections": 1}


server = Server("broken", "1.0.0", state_secret=secrets.token_bytes(32), lifespan=pool)  # type: ignore[arg-type]
