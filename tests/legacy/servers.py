"""A small MRTR server for the legacy-era tests, written only for 2026-07-28.

    python -m snodo run tests/legacy/servers.py:server --transport stdio
    python -m snodo run tests/legacy/servers.py:modern_only --transport http --port 8000

Nothing here knows about legacy sessions: the bridge makes these handlers serve them.
"""

from __future__ import annotations

from typing import Any

from snodo import elicitation, sampling
from snodo.core.context import Context
from snodo.core.result import MISSING, InputRequired, input_required
from snodo.server import Server

__all__ = ["modern_only", "server"]

SECRET = b"\x17" * 32

server = Server("legacy-test-server", "1.0.0", state_secret=SECRET)
modern_only = Server("modern-only-server", "1.0.0", legacy=None)

NAME = elicitation.form(
    "Your name?",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)
PAGE = elicitation.url("Please sign in", "https://example.com/sign-in")
POEM = sampling.create_message([sampling.message("user", "A poem, please")], max_tokens=20)


@server.tool
def greet(ctx: Context) -> InputRequired | str:
    """Ask a name, keeping a sealed count of rounds, then greet."""
    rounds = (ctx.state_data or {}).get("rounds", 0) + 1
    answer = elicitation.response(ctx, "name", NAME)
    if answer is MISSING:
        return input_required({"name": NAME}, request_state=ctx.seal({"rounds": rounds}))
    if isinstance(answer, elicitation.Accepted):
        return f"Hello, {answer.content['name']} (round {rounds})"
    return "No name"


@server.tool
def sign_in(ctx: Context) -> InputRequired | str:
    """URL-mode consent."""
    answer = elicitation.response(ctx, "page", PAGE)
    if answer is MISSING:
        return input_required({"page": PAGE})
    return "consented" if isinstance(answer, elicitation.Accepted) else "refused"


@server.tool
def poem(ctx: Context) -> InputRequired | str:
    """Needs sampling."""
    answer = sampling.response(ctx, "poem", POEM)
    if answer is MISSING:
        return input_required({"poem": POEM})
    return str(getattr(answer.content, "text", ""))


@server.tool
def never_satisfied(ctx: Context) -> InputRequired:
    """Asks again whatever the answer: the bridge must stop it."""
    return input_required({"name": NAME})


@server.tool
def three_at_once(ctx: Context) -> InputRequired | str:
    """Three questions in one round."""
    keys = ("a", "b", "c")
    if all(elicitation.response(ctx, key, NAME) is not MISSING for key in keys):
        return "all answered"
    return input_required({key: NAME for key in keys})


@server.tool
def chatty(ctx: Context) -> str:
    """Logs at info and at debug."""
    ctx.log("debug", "debug detail")
    ctx.log("info", "info detail")
    return "done"


@server.resource("test://profile", name="profile", mime_type="text/plain")
def profile(ctx: Context) -> Any:
    """Needs a name too."""
    answer = elicitation.response(ctx, "name", NAME)
    if answer is MISSING:
        return input_required({"name": NAME})
    if isinstance(answer, elicitation.Accepted):
        return f"profile of {answer.content['name']}"
    return "no profile"


@modern_only.tool
def ping_tool() -> str:
    """Something to list."""
    return "pong"
