"""A server ready to publish: its Server Card, registry entry and bundle say what it
declares here. Try it: `snodo card docs/examples/publishing.py`."""

from pydantic import BaseModel, Field, SecretStr

from snodo import Publishing, Server


class Settings(BaseModel):
    """What its user configures: each field is an environment variable (API_KEY, UNITS)."""

    api_key: SecretStr = Field(title="API key", description="Your forecast service's key.")
    units: str = Field("metric", description="metric or imperial.")


server = Server(
    "forecasts",
    "1.2.0",
    title="Forecasts",
    description="Weather forecasts for any city.",
    publishing=Publishing(
        website_url="https://example.com/forecasts",
        repository="https://github.com/example/forecasts",
        card_name="io.github.example/forecasts",
    ),
    settings=Settings,
)


@server.tool
def forecast(city: str, days: int = 1) -> str:
    """The forecast for a city, in the units the user chose."""
    settings = server.read_settings()
    return f"{days}-day forecast for {city} ({settings.units}): sunny"


@server.prompt
def plan_a_day(city: str) -> str:
    """Plan a day out around the forecast."""
    return f"Plan a day out in {city} around its weather forecast."
