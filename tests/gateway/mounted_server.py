"""A server with another mounted inside it, for the mount tests (in process, and as
``snodo run tests/gateway/mounted_server.py:server`` for a legacy session over HTTP)."""

from __future__ import annotations

from snodo import Server, elicitation
from snodo.core.context import Context
from snodo.core.result import MISSING, InputRequired, input_required
from snodo.gateway import mount

__all__ = ["CITY", "make", "server"]

CITY = elicitation.form(
    "City?", {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
)


def weather_server() -> Server:
    weather = Server("weather", "1.0.0")

    @weather.tool
    def forecast(days: int, ctx: Context) -> InputRequired | str:
        """Asks which city, then answers (an MRTR round of the mounted server's own)."""
        answer = elicitation.response(ctx, "city", CITY)
        if answer is MISSING:
            return input_required({"city": CITY})
        if not isinstance(answer, elicitation.Accepted):
            return "no forecast"
        return f"{answer.content['city']}: sunny for {days} days"

    @weather.resource("weather://stations")
    def stations() -> str:
        """The stations."""
        return "Oslo, Bergen"

    @weather.prompt
    def ask(city: str) -> str:
        """A question about a city's weather."""
        return f"How is the weather in {city}?"

    return weather


def make() -> tuple[Server, Server]:
    """The main server, and the weather server mounted in it as ``weather``."""
    main = Server("main", "1.0.0")

    @main.tool
    def hello() -> str:
        """The main server's own tool."""
        return "hi"

    @main.resource("main://about")
    def about() -> str:
        """The main server's own resource."""
        return "the main server"

    weather = weather_server()
    mount(main, weather, prefix="weather")
    return main, weather


server, _weather = make()
