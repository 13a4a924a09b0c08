"""A form built from a model, answered as an instance of it: python booking.py"""

import asyncio
import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from snodo import Ask, Client, Server, elicitation
from snodo.client.transports import MemoryTransport

server = Server("hotel", "1.0.0")


class Booking(BaseModel):
    city: str = Field(title="City", min_length=2)
    arrival: datetime.date
    nights: int = Field(default=1, ge=1, le=30)
    room: Literal["single", "double"] = "double"
    extras: list[Literal["parking", "breakfast"]] = []


BOOKING = elicitation.form("Where and when?", Booking)


@server.tool
def book(booking: Annotated[Booking | None, Ask(BOOKING)]) -> str:
    """Book a room; the user fills in the form."""
    if booking is None:
        return "Nothing booked."
    leaving = booking.arrival + datetime.timedelta(days=booking.nights)
    return f"A {booking.room} room in {booking.city}, {booking.arrival} to {leaving}."


async def user(params: dict[str, Any]) -> dict[str, Any]:
    print(sorted(params["requestedSchema"]["properties"]), params["requestedSchema"]["required"])
    return {"action": "accept", "content": {"city": "Oslo", "arrival": "2026-12-24", "nights": 3}}


async def main() -> None:
    async with Client(MemoryTransport(server), elicitation=user) as client:
        print((await client.call_tool("book")).content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
