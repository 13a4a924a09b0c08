"""Target of the hardening tests: an MRTR tool whose every invocation is counted."""

from __future__ import annotations

import os
from typing import Any

from snodo.asking import elicitation
from snodo.core.context import Context
from snodo.core.result import input_required
from snodo.server import Limits, Server
from snodo.transports.http import HttpApp, Unauthorized

QUESTION = elicitation.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)
server = Server("hardening", "1", state_secret=bytes.fromhex("11" * 32))
invocations = {"guarded": 0}


@server.tool
def guarded(ctx: Context, note: str = "") -> Any:
    """Counts every time it runs; asks for a name, with state."""
    invocations["guarded"] += 1
    answer = elicitation.response(ctx, "name", QUESTION)
    if isinstance(answer, elicitation.Accepted):
        return f"hello {answer.content['name']} ({ctx.state_data})"
    return input_required({"name": QUESTION}, request_state=ctx.seal({"round": 1}))


@server.tool
def invocation_count() -> str:
    return str(invocations["guarded"])


@server.tool
def whoami(ctx: Context) -> str:
    return ctx.principal or "anonymous"


TOKENS = {"token-alice": "alice", "token-bob": "bob"}


def authenticate(headers: dict[str, str]) -> str | None:
    """Bearer tokens from a fixed table; no token is anonymous only when allowed."""
    value = headers.get("authorization", "")
    if not value.startswith("Bearer ") or value[7:] not in TOKENS:
        raise Unauthorized('Bearer realm="hardening", error="invalid_token"')
    return TOKENS[value[7:]]


def authenticated_app() -> HttpApp:
    return HttpApp(server, authenticate=authenticate)


if os.environ.get("HARDENING_AUTH"):
    app = authenticated_app()


few_streams = Server("few-streams", "1", limits=Limits(listen_streams=2))
"""Holds at most two subscriptions/listen streams open, to show the cap."""


@few_streams.tool
def ping_tool() -> str:
    return "pong"
