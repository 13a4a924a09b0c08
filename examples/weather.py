"""A forecast tool that asks the user for a city. Serve it with `snodo run weather:server`."""

import os
from typing import Annotated

from pydantic import BaseModel

from snodo import Ask, Server, elicitation

# The secret that signs request state: at least 32 random bytes, as hex. Make one with
#   python -c "import secrets; print(secrets.token_hex(32))"
# Every worker that may take a retry must hold the same secret, so it is configuration,
# never code.
if not os.environ.get("WEATHER_STATE_SECRET"):
    raise SystemExit("weather: set WEATHER_STATE_SECRET to 64 hex digits (32 random bytes)")
SECRET = bytes.fromhex(os.environ["WEATHER_STATE_SECRET"])

# The guard makes each request state one-time: a replayed final retry is refused instead
# of running the tool again (one process; SQLiteGuard or RedisGuard for several).
server = Server("weather", "1.0.0", state_secret=SECRET, state_guard=True)


class Place(BaseModel):
    city: str


CITY = elicitation.form("Which city?", Place)  # the form's schema comes from the model


@server.tool
def forecast(city: Annotated[str | None, Ask(CITY, pick="city")], days: int = 1) -> str:
    """Weather for the user's city."""
    if city is None:  # the user declined or dismissed the question
        return "No city, no forecast."
    return f"{days}-day forecast for {city}: sunny"
