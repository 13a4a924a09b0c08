"""A forecast tool that asks the user for a city. Try it: `snodo call weather.py forecast`."""

from typing import Annotated

from pydantic import BaseModel

from snodo import Ask, Server, elicitation

# Request state is signed with SNODO_STATE_SECRET when it is set (every worker of a
# deployment shares it), else with a secret made for this process (fine for one).
# Each request state is one-time too: a replayed final retry is refused instead of
# running the tool again (a guard in this process by default; SQLiteGuard or RedisGuard
# shared by several).
server = Server("weather", "1.0.0", description="Forecasts for the user's city.")


class Place(BaseModel):
    city: str


CITY = elicitation.form("Which city?", Place)  # the form's schema comes from the model


@server.tool
def forecast(city: Annotated[str | None, Ask(CITY, pick="city")], days: int = 1) -> str:
    """Weather for the user's city."""
    if city is None:  # the user declined or dismissed the question
        return "No city, no forecast."
    return f"{days}-day forecast for {city}: sunny"
