"""One server, two eras: the greeter of hello.py served over stdio to a client that
speaks 2026-07-28 and to one that opens a 2025-11-25 session. python eras.py
"""

import asyncio
import sys
from pathlib import Path
from typing import Any

from snodo import Client

SERVE = [sys.executable, "-m", "snodo", "run", f"{Path(__file__).with_name('hello.py')}:server"]


def user(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Grace"}}


async def main() -> None:
    for era in ("modern", "legacy"):
        async with Client.stdio(SERVE, era=era, elicitation=user) as client:
            # In a legacy session the input request reaches the client as a real
            # elicitation/create request: the server's bridge turns each round into one.
            result = await client.call_tool("greet")
            print(client.era, result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
