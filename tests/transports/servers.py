"""The server the transport tests run as a subprocess (and in-process for MemoryTransport).

    python -m snodo run tests/transports/servers.py:server --transport http --port 8000
    python -m snodo run tests/transports/servers.py:server --transport stdio

Everything here is built with snodo's public API. Request state is sealed and verified
by the server (``state_secret``, snodo.core.state); the secret is a fixed test constant, so a
flow paused against one process can be resumed against another
(stdio) just as it can behind a load balancer. The slow tool records in module state
whether a run finished or was cancelled, and ``run_status`` reports it, so tests can
see a cancellation from outside the process.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Mapping
from typing import Any

from snodo import Limits, elicitation, roots, sampling
from snodo.core.context import Context
from snodo.core.result import MISSING, InputRequired, input_required
from snodo.server import Server

__all__ = ["server"]

log = logging.getLogger("snodo.tests.servers")

SECRET = bytes.fromhex(os.environ.get("SNODO_TEST_STATE_SECRET", "5e" * 32))
PAGE_SIZE = 4

server = Server(
    "transport-test-server", "1.0.0", limits=Limits(page_size=PAGE_SIZE), state_secret=SECRET
)

RUNS: dict[str, str] = {}
"""tag -> "started" | "finished" | "cancelled", for the slow tool."""

# --- plain tools -------------------------------------------------------------------------


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool
async def progress(ctx: Context, steps: int = 3, delay: float = 0.01) -> str:
    """Report progress ``steps`` times, then finish."""
    for step in range(1, steps + 1):
        ctx.report_progress(step, steps, f"step {step}")
        await asyncio.sleep(delay)
    return f"done after {steps} steps"


@server.tool
async def slow(seconds: float, tag: str = "") -> str:
    """Sleep, recording under ``tag`` whether the run finished or was cancelled."""
    RUNS[tag] = "started"
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        RUNS[tag] = "cancelled"
        raise
    RUNS[tag] = "finished"
    return f"slept {seconds}"


@server.tool
def run_status(tag: str) -> str:
    """What became of the slow run ``tag``: started, finished, cancelled or unknown."""
    return RUNS.get(tag, "unknown")


@server.tool
def chatty(ctx: Context) -> str:
    """Log to stderr (the process log) and, if the request opted in, to the client."""
    log.warning("chatty was called: this line belongs on stderr")
    ctx.log("info", {"said": "hello"}, logger="chatty")
    return "said hello"


@server.tool
def shout() -> str:
    """print() to the process's standard output, as careless tool code does."""
    print("this is not JSON-RPC")
    return "shouted"


@server.tool
def capabilities(ctx: Context) -> dict[str, Any]:
    """The client capabilities this very request declared."""
    return dict(ctx.client_capabilities)


@server.tool
def touch_tools() -> str:
    """Tell every listen stream that asked for it that the tool list changed."""
    return str(server.notify_list_changed("tools"))


@server.tool
def touch_resource(uri: str) -> str:
    """Tell every listen stream watching ``uri`` (or a prefix of it) that it changed."""
    return str(server.notify_resource_updated(uri))


@server.tool
def open_subscriptions() -> str:
    """How many listen streams are open in this process."""
    return str(len(list(server.subscriptions)))


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
            "note": {"type": "string"},
        },
        "required": ["region"],
    }
)
def headed(**arguments: Any) -> str:
    """Echo the arguments; region, count and flag travel in Mcp-Param-* headers too."""
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def _moving(**arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True)


def _moving_schema(header: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": header}},
        "required": ["region"],
    }


server.add_tool(_moving, name="moving", input_schema=_moving_schema("Region"))


@server.tool
def move_header() -> str:
    """Register ``moving`` again with its region mirrored under another header name."""
    server.add_tool(_moving, name="moving", input_schema=_moving_schema("Zone"))
    return "moved"


# --- MRTR ------------------------------------------------------------------------------

QUESTIONS: dict[str, dict[str, Any]] = {
    "name": elicitation.form(
        "What is your name?",
        {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}},
    ),
    "color": elicitation.form(
        "Which colour do you like?",
        {
            "type": "object",
            "properties": {"color": {"type": "string", "enum": ["red", "green", "blue"]}},
        },
    ),
}


def profile_flow(ctx: Context) -> InputRequired | str:
    """Ask for a name and a colour at once; keep what was answered in sealed state and
    ask again only for what is missing. Decline or cancel ends the flow."""
    # The server verified any echoed state (snodo.core.state) before this handler ran.
    known: dict[str, Any] = dict(ctx.state_data or {"rounds": 0})
    known["rounds"] += 1
    for key, request in QUESTIONS.items():
        if key in known:
            continue
        answer = elicitation.response(ctx, key, request)
        if isinstance(answer, elicitation.Declined):
            return f"declined {key}"
        if isinstance(answer, elicitation.Cancelled):
            return f"cancelled {key}"
        if isinstance(answer, elicitation.Accepted) and key in answer.content:
            known[key] = answer.content[key]
    missing = {key: request for key, request in QUESTIONS.items() if key not in known}
    if missing:
        return input_required(missing, request_state=ctx.seal(known))
    return f"name={known['name']} color={known['color']} rounds={known['rounds']}"


@server.tool
def profile(ctx: Context) -> InputRequired | str:
    """Ask the user for a name and a colour."""
    return profile_flow(ctx)


@server.resource("profile://me", name="profile", mime_type="text/plain")
def profile_resource(ctx: Context) -> InputRequired | str:
    """The user's profile, asked for on read."""
    return profile_flow(ctx)


@server.prompt(name="profile")
def profile_prompt(ctx: Context) -> InputRequired | str:
    """A prompt built from the user's profile."""
    outcome = profile_flow(ctx)
    return outcome if isinstance(outcome, InputRequired) else f"Profile: {outcome}"


SUMMARY = sampling.create_message(
    [sampling.message("user", "Summarise the weather.")], max_tokens=20
)
ROOTS = roots.list_roots()
CONFIRM = elicitation.form(
    "Go ahead?",
    {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
)


@server.tool
def assistant(ctx: Context) -> InputRequired | str:
    """Ask for a sampled summary, the client's roots and a confirmation, all in one round."""
    summary = sampling.response(ctx, "summary", SUMMARY)
    found = roots.response(ctx, "roots", ROOTS)
    confirm = elicitation.response(ctx, "confirm", CONFIRM)
    wanted: dict[str, Mapping[str, Any]] = {}
    if summary is MISSING:
        wanted["summary"] = SUMMARY
    if found is MISSING:
        wanted["roots"] = ROOTS
    if confirm is MISSING:
        wanted["confirm"] = CONFIRM
    if wanted or summary is MISSING or found is MISSING:
        return input_required(wanted)
    text = sampling.text(summary)
    uris = ",".join(root.uri for root in found.roots)
    ok = isinstance(confirm, elicitation.Accepted) and confirm.content.get("ok") is True
    return f"summary={text} model={summary.model} roots={uris} ok={ok}"


VISIT = elicitation.url("Sign in at the provider, then come back.", "https://example.com/login")


@server.tool
def visit(ctx: Context) -> InputRequired | str:
    """Send the user to a URL (URL-mode elicitation)."""
    answer = elicitation.response(ctx, "visit", VISIT)
    if answer is MISSING:
        return input_required({"visit": VISIT})
    return "visited" if isinstance(answer, elicitation.Accepted) else "stayed"


@server.tool
def sample(ctx: Context) -> InputRequired | str:
    """Ask the client's model for a summary."""
    answer = sampling.response(ctx, "summary", SUMMARY)
    if answer is MISSING:
        return input_required({"summary": SUMMARY})
    return f"sampled by {answer.model}"


@server.tool
def list_client_roots(ctx: Context) -> InputRequired | str:
    """Ask the client for its roots."""
    found = roots.response(ctx, "roots", ROOTS)
    if found is MISSING:
        return input_required({"roots": ROOTS})
    return ",".join(root.uri for root in found.roots)


@server.tool
def warmup(ctx: Context, rounds: int) -> InputRequired | str:
    """Answer with state only (no input requests) until ``rounds`` retries came back."""
    seen = ctx.state_data or 0
    if seen >= rounds:
        return f"ready after {seen} retries"
    return input_required(request_state=ctx.seal(seen + 1))


# --- resources, prompts, completion --------------------------------------------------


@server.resource("data://greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the resource"


@server.resource("note://café/menu", name="menu", mime_type="text/plain")
def menu() -> str:
    """A resource whose URI is not plain ASCII (Mcp-Name travels base64-encoded)."""
    return "croissant"


@server.prompt(name="greet")
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


NAMES = ["alice", "albert", "bob"]


@server.completion("ref/prompt", "greet")
def complete_name(argument: str, value: str, context: Mapping[str, str]) -> list[str]:
    """Names that start with what was typed."""
    return [name for name in NAMES if argument == "name" and name.startswith(value)]
