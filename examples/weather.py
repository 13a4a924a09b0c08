"""A forecast tool that asks the user for a city. Serve it with `snodo run weather:server`."""

import os

from snodo import elicitation
from snodo.context import Context
from snodo.result import input_required
from snodo.server import Server

# The secret that signs request state: at least 32 random bytes, as hex. Make one with
#   python -c "import secrets; print(secrets.token_hex(32))"
# Every worker that may take a retry must hold the same secret, so it is configuration,
# never code.
if not os.environ.get("WEATHER_STATE_SECRET"):
    raise SystemExit("weather: set WEATHER_STATE_SECRET to 64 hex digits (32 random bytes)")
SECRET = bytes.fromhex(os.environ["WEATHER_STATE_SECRET"])

server = Server("weather", "1.0.0", state_secret=SECRET)

CITY = elicitation.form(
    "Which city?",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@server.tool
def forecast(ctx: Context, days: int = 1) -> object:
    """Weather for the user's city."""
    answer = elicitation.response(ctx, "city", CITY)
    if isinstance(answer, elicitation.Accepted):
        return f"{days}-day forecast for {answer.content['city']}: sunny"
    if isinstance(answer, elicitation.Declined | elicitation.Cancelled):
        return "No city, no forecast."
    return input_required({"city": CITY}, request_state=ctx.seal({"asked": 1}))
