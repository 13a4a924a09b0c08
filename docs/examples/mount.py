"""Two servers served as one (mount), and two used as one from a client (ClientGroup).
python mount.py
"""

import asyncio

from snodo import Client, Server
from snodo.client.transports import MemoryTransport
from snodo.gateway import ClientGroup, mount

weather = Server("weather", "1.0.0")
notes = Server("notes", "1.0.0")


@weather.tool
def forecast(city: str) -> str:
    """Today's weather in a city."""
    return f"{city}: sunny"


@notes.tool
def add(text: str) -> str:
    """Save a note."""
    return f"saved: {text}"


@notes.resource("notes://all")
def every_note() -> str:
    """Every note."""
    return "milk, eggs"


main = Server("assistant", "1.0.0")
mount(main, weather, prefix="weather")  # weather_forecast
mount(main, notes, prefix="notes")  # notes_add, and notes://all as it is


async def main_server() -> None:
    async with Client(MemoryTransport(main)) as client:
        print("mounted:", [tool.name for tool in await client.list_tools()])
        print((await client.call_tool("weather_forecast", {"city": "Oslo"})).content[0].text)
        print((await client.read_resource("notes://all")).contents[0].text)


async def one_client() -> None:
    clients = {"weather": Client(MemoryTransport(weather)), "notes": Client(MemoryTransport(notes))}
    async with ClientGroup(clients) as group:
        print("group:", [tool.name for tool in await group.list_tools()])
        saved = await group.call_tool("notes_add", {"text": "bread"})
        print(saved.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    asyncio.run(main_server())
    asyncio.run(one_client())
