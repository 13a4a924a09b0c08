"""Ask the weather server for a forecast, answering its question as the user would.

Start the server (examples/weather.py), then: python weather_client.py [URL]
"""

import asyncio
import sys
from typing import Any

from snodo.client import Client

URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp"


async def ask_user(params: dict[str, Any]) -> dict[str, Any]:
    """A form elicitation: a real client shows params["message"] and a form built from
    params["requestedSchema"], and returns what the user did."""
    print(params["message"])
    return {"action": "accept", "content": {"city": "Oslo"}}


async def main() -> None:
    async with Client.http(URL, elicitation=ask_user) as client:
        for tool in await client.list_tools():  # snodo_wire Tool models, every page
            print(f"{tool.name}: {tool.description}")
        result = await client.call_tool("forecast", {"days": 2})  # every MRTR round
        print(result.content[0].text)  # a snodo_wire CallToolResult


if __name__ == "__main__":
    asyncio.run(main())
