"""The conformance fixture: a snodo server offering everything the official MCP
conformance runner (@modelcontextprotocol/conformance) calls in its 2026-07-28 server
scenarios, built only with snodo's public API.

The runner looks things up by name, so names, texts and the order of tools/list are
part of the contract: ``test_simple_text`` comes first because the header scenarios
call ``tools[0]`` with empty arguments and expect a result. Serve it with

    python -m snodo run tests/conformance/fixture.py:server --transport http --port 8000

or run the whole suite with ``scripts/conformance``.

The ``test_input_required_result_*`` tools and prompt exercise multi round-trip
requests (MRTR): they answer ``input_required``, the runner retries with
``inputResponses`` (and the ``requestState`` it was given), and nothing waits on the
server in between. Request state is sealed with ``SNODO_STATE_SECRET`` (hex) when it
is set, so several fixture processes can take each other's retries; otherwise with a
secret drawn anew for every process, so a token only ever opens where it was issued.

The tasks extension's tools (``greet`` to ``test_tool_with_task``, at the end) keep
their tasks in ``SNODO_TASK_STORE``: ``memory:`` (the default), ``sqlite:///PATH`` or
``redis://HOST:PORT/DB``; processes sharing one answer for each other's tasks.
Notifications (task status, list changes, resource updates) reach the listen streams
of other processes through ``SNODO_NOTIFY``: ``memory:`` (this process only) or
``redis://...``; by default the task store's Redis when it is one, ``memory:`` otherwise.
Legacy sessions live in ``SNODO_LEGACY_STORE`` (``memory:`` by default, or
``redis://...``, so that any worker answers any session).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from snodo import Caching, elicitation, roots, sampling
from snodo.asking.elicitation import Accepted
from snodo.core import capabilities
from snodo.core.context import Context
from snodo.core.errors import InternalError
from snodo.core.result import MISSING, InputRequired, ToolError, input_required, tool_error
from snodo.extensions.tasks import Tasks, background, task_store
from snodo.server import CacheHint, LegacyLimits, Server
from snodo.server.notify_bus import notification_bus

__all__ = ["server"]

TASK_STORE = os.environ.get("SNODO_TASK_STORE") or "memory:"
NOTIFY_DEFAULT = TASK_STORE if TASK_STORE.startswith(("redis://", "rediss://")) else "memory:"

server = Server(
    "snodo-conformance-fixture",
    "1.0.0",
    instructions="Test fixture for the MCP conformance runner.",
    # The caching hints of the runner's reference fixture.
    caching=Caching(lists=CacheHint(300_000, "public"), read=CacheHint(300_000, "private")),
    extensions=[Tasks(task_store(TASK_STORE), poll_interval_ms=200)],
    notifications=notification_bus(os.environ.get("SNODO_NOTIFY") or NOTIFY_DEFAULT),
    legacy=LegacyLimits(store=os.environ.get("SNODO_LEGACY_STORE") or None),
)


# A 1x1 PNG and a silent WAV: the reference fixture's sample media.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAF"
    "BQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

Result = str | InputRequired

# --- content tools ---------------------------------------------------------------------


@server.tool
def test_simple_text() -> str:
    """Return a simple text response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> dict[str, str]:
    """Return a small PNG image."""
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


@server.tool
def test_audio_content() -> dict[str, str]:
    """Return a short WAV clip."""
    return {"type": "audio", "data": WAV, "mimeType": "audio/wav"}


@server.tool
def test_embedded_resource() -> dict[str, Any]:
    """Return an embedded text resource."""
    return {
        "type": "resource",
        "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        },
    }


@server.tool
def test_multiple_content_types() -> list[Any]:
    """Return text, an image and an embedded resource together."""
    return [
        "Multiple content types test:",
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
            },
        },
    ]


@server.tool
def test_error_handling() -> ToolError:
    """Fail on purpose: a tool result with isError set, not a protocol error."""
    return tool_error("This tool intentionally returns an error for testing")


@server.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Report progress three times, then return the progress token it was given."""
    for step in (0, 50, 100):
        ctx.report_progress(step, 100)
        await asyncio.sleep(0.05)
    return str(ctx.progress_token)


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Log a message; it is only sent when the request asked for a log level."""
    ctx.log("info", "test_logging_tool ran")
    return "Logged at info level (sent only when the request set a log level)."


@server.tool
def test_streaming_elicitation() -> str:
    """Answer without sending the client any request on the response stream."""
    return "No request is sent on the stream: ask for input with input_required instead."


# --- list changes (subscriptions/listen) ----------------------------------------------


@server.tool
def test_trigger_tool_change() -> str:
    """Tell tools/list_changed subscribers that the tool list changed."""
    return f"Told {server.notify_list_changed('tools')} subscription(s)."


@server.tool
def test_trigger_prompt_change() -> str:
    """Tell prompts/list_changed subscribers that the prompt list changed."""
    return f"Told {server.notify_list_changed('prompts')} subscription(s)."


@server.tool
def test_trigger_resource_update() -> str:
    """Tell the subscribers of test://watched-resource that it changed."""
    told = server.notify_resource_updated("test://watched-resource")
    return f"Told {told} subscription(s)."


# --- input requests (MRTR) ------------------------------------------------------------


def _form(message: str, **properties: dict[str, Any]) -> dict[str, Any]:
    """A form elicitation whose every property is required."""
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return elicitation.form(message, schema)


def _ask_model(question: str, max_tokens: int) -> dict[str, Any]:
    return sampling.create_message([sampling.message("user", question)], max_tokens=max_tokens)


NAME = _form("What is your name?", name={"type": "string", "description": "Your name"})
COLOUR = _form(
    "What is your favourite colour?", color={"type": "string", "description": "A colour"}
)
CONFIRM = _form("Please confirm", ok={"type": "boolean", "description": "Confirm?"})
CONTEXT = _form(
    "What context should the prompt use?",
    context={"type": "string", "description": "Context for the prompt"},
)
CAPITAL = _ask_model("What is the capital of France?", 100)
GREETING = _ask_model("Write a one-line greeting.", 50)
ROOTS = roots.list_roots()

READERS: Mapping[str, Callable[[Context, str, Mapping[str, Any]], Any]] = {
    "elicitation/create": elicitation.response,
    "sampling/createMessage": sampling.response,
    "roots/list": roots.response,
}
"""How to read the answer to an input request, by the request's method."""


def _answers(
    ctx: Context, requests: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, Any], dict[str, Mapping[str, Any]]]:
    """The answers this retry carries, and the requests still unanswered.

    Keys the server did not ask for are never looked at (basic/patterns/mrtr.mdx:
    ignore what you do not recognise).
    """
    answers: dict[str, Any] = {}
    unanswered: dict[str, Mapping[str, Any]] = {}
    for key, request in requests.items():
        answer = READERS[request["method"]](ctx, key, request)
        if answer is MISSING:
            unanswered[key] = request
        else:
            answers[key] = answer
    return answers, unanswered


def _seal(data: Any, ctx: Context) -> str:
    return ctx.seal(data)


def _opened(ctx: Context) -> Any:
    """What this flow sealed into an earlier round, or None on the first round.

    The server verified it before the handler ran: a state that was not sealed with
    its keys for this very request was refused with InvalidState (-32602), whatever is
    wrong with it.
    """
    return ctx.state_data


def _sampled_text(result: Any) -> str:
    return str(getattr(result.content, "text", "(no text)"))


@server.tool
def test_input_required_result_elicitation(ctx: Context) -> Result:
    """Ask the user's name through elicitation, then greet them."""
    answer = elicitation.response(ctx, "user_name", NAME)
    if answer is MISSING:
        return input_required({"user_name": NAME})
    if isinstance(answer, Accepted):
        return f"Hello, {answer.content['name']}!"
    return "Hello, whoever you are!"


@server.tool
def test_input_required_result_sampling(ctx: Context) -> Result:
    """Ask the client's model a question and return its answer."""
    answer = sampling.response(ctx, "sample_request", CAPITAL)
    if answer is MISSING:
        return input_required({"sample_request": CAPITAL})
    return f"The model answered: {_sampled_text(answer)}"


@server.tool
def test_input_required_result_list_roots(ctx: Context) -> Result:
    """Ask the client for its roots and count them."""
    answer = roots.response(ctx, "roots_request", ROOTS)
    if answer is MISSING:
        return input_required({"roots_request": ROOTS})
    return f"Found {len(answer.roots)} root(s)."


def _confirmed(ctx: Context) -> Result:
    """Ask for confirmation under sealed state; the retry must bring that state back."""
    answer = MISSING if _opened(ctx) is None else elicitation.response(ctx, "confirm", CONFIRM)
    if answer is MISSING:
        return input_required({"confirm": CONFIRM}, _seal({"asked": "confirm"}, ctx))
    ok = isinstance(answer, Accepted) and answer.content.get("ok") is True
    return "state-ok: confirmed" if ok else "state-ok: not confirmed"


@server.tool
def test_input_required_result_request_state(ctx: Context) -> Result:
    """Ask for confirmation, carrying sealed request state between rounds."""
    return _confirmed(ctx)


@server.tool
def test_input_required_result_tampered_state(ctx: Context) -> Result:
    """Like the request-state tool: a modified requestState is refused with -32602."""
    return _confirmed(ctx)


@server.tool
def test_input_required_result_multiple_inputs(ctx: Context) -> Result:
    """Ask for a name, a sampled greeting and the client's roots in one round."""
    _opened(ctx)  # any state echoed back must be one this flow issued
    requests = {"user_name": NAME, "greeting": GREETING, "client_roots": ROOTS}
    answers, unanswered = _answers(ctx, requests)
    if unanswered:
        return input_required(unanswered, _seal({"asked": sorted(unanswered)}, ctx))
    name = answers["user_name"]
    who = name.content["name"] if isinstance(name, Accepted) else "someone"
    greeting = _sampled_text(answers["greeting"])
    return f"{greeting} ({who}, {len(answers['client_roots'].roots)} root(s))"


@server.tool
def test_input_required_result_multi_round(ctx: Context) -> Result:
    """Ask for a name, then in a second round for a favourite colour."""
    earlier = _opened(ctx) or {}
    name = earlier.get("name")
    if name is None:
        answer = elicitation.response(ctx, "step1", NAME)
        if answer is MISSING:
            return input_required({"step1": NAME}, _seal({"round": 1}, ctx))
        if not isinstance(answer, Accepted):
            return "No name given; stopping."
        name = answer.content["name"]
    colour = elicitation.response(ctx, "step2", COLOUR)
    if colour is MISSING:
        return input_required({"step2": COLOUR}, _seal({"round": 2, "name": name}, ctx))
    if not isinstance(colour, Accepted):
        return f"{name} kept their favourite colour to themselves."
    return f"{name}'s favourite colour is {colour.content['color']}."


@server.tool
def test_input_required_result_capabilities(ctx: Context) -> Result:
    """Ask only for the kinds of input this request's client capabilities declare."""
    offered = {"user_input": NAME, "sample_input": GREETING, "roots_input": ROOTS}
    declared = {
        key: request
        for key, request in offered.items()
        if not capabilities.missing([request], ctx.client_capabilities)
    }
    if not declared:
        return "This client declared no way to provide input."
    answers, unanswered = _answers(ctx, declared)
    if unanswered:
        return input_required(unanswered)
    return f"Received {len(answers)} answer(s): {', '.join(sorted(answers))}."


@server.tool
def test_missing_capability(ctx: Context) -> Result:
    """Needs sampling: a client that does not declare it is refused with -32021."""
    # Asked regardless of what the client declared: admission turns an undeclared
    # need into the -32021 error, which is what this tool is for.
    answer = sampling.response(ctx, "probe", GREETING)
    if answer is MISSING:
        return input_required({"probe": GREETING})
    return f"Sampling works: {_sampled_text(answer)}"


# --- the 2025-11-25 scenarios ---------------------------------------------------------------
# Written once, as MRTR handlers: a modern client answers input_required itself, and a
# legacy (initialize-based) session gets each input request as a real server-to-client
# request from the bridge (snodo.legacy.bridge).


@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Log three messages about 50 ms apart, at info level."""
    for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.log("info", text)
        await asyncio.sleep(0.05)
    return "Logged three messages."


@server.tool
def test_sampling(ctx: Context, prompt: str) -> Result:
    """Ask the client's model to answer the prompt."""
    request = _ask_model(prompt, 100)
    answer = sampling.response(ctx, "completion", request)
    if answer is MISSING:
        return input_required({"completion": request})
    return f"LLM response: {_sampled_text(answer)}"


def _elicited(answer: Any) -> str:
    if isinstance(answer, Accepted):
        return f"action=accept, content={json.dumps(dict(answer.content), sort_keys=True)}"
    return "action=decline" if isinstance(answer, elicitation.Declined) else "action=cancel"


ACCOUNT_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


@server.tool
def test_elicitation(ctx: Context, message: str) -> Result:
    """Ask the user for a username and an email address, with the given message."""
    request = elicitation.form(message, ACCOUNT_SCHEMA)
    answer = elicitation.response(ctx, "account", request)
    if answer is MISSING:
        return input_required({"account": request})
    return f"User response: {_elicited(answer)}"


DEFAULTS = elicitation.form(
    "Please review these values",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    },
)


@server.tool
def test_elicitation_sep1034_defaults(ctx: Context) -> Result:
    """Ask with a form whose every field has a default (SEP-1034)."""
    answer = elicitation.response(ctx, "values", DEFAULTS)
    if answer is MISSING:
        return input_required({"values": DEFAULTS})
    return f"Elicitation completed: {_elicited(answer)}"


def _titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in pairs]


ENUMS = elicitation.form(
    "Please choose",
    {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": _titled(
                    ("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third")
                ),
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": _titled(
                        ("value1", "First Choice"), ("value2", "Second"), ("value3", "Third")
                    )
                },
            },
        },
    },
)


@server.tool
def test_elicitation_sep1330_enums(ctx: Context) -> Result:
    """Ask with all five enum shapes of SEP-1330."""
    answer = elicitation.response(ctx, "choices", ENUMS)
    if answer is MISSING:
        return input_required({"choices": ENUMS})
    return f"Elicitation completed: {_elicited(answer)}"


# --- schemas and headers ----------------------------------------------------------------

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(**contact: Any) -> str:
    """Take a contact whose schema uses JSON Schema 2020-12 keywords, and echo it."""
    return json.dumps(contact, sort_keys=True)


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {
                "type": "string",
                "description": "Region; clients mirror it into the Mcp-Param-Region header",
                "x-mcp-header": "Region",
            }
        },
        "required": ["region"],
    }
)
def test_header_param(region: str) -> str:
    """Echo a region that also travels in the Mcp-Param-Region header."""
    return f"Region: {region}"


# --- resources ----------------------------------------------------------------------------


@server.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a PNG image)."""
    return base64.b64decode(PNG)


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients subscribe to."""
    return "Watched resource content."


@server.resource_template(
    "test://template/{id}/data", name="template", mime_type="application/json"
)
def template_data(id: str) -> str:
    """JSON data for any id."""
    data = {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}
    return json.dumps(data, separators=(",", ":"))


# --- prompts ------------------------------------------------------------------------------


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:  # noqa: N803
    """A prompt that embeds the resource it is given."""
    resource = {
        "uri": resourceUri,
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return [
        {"role": "user", "content": {"type": "resource", "resource": resource}},
        "Please process the embedded resource above.",
    ]


@server.prompt()
def test_prompt_with_image() -> list[Any]:
    """A prompt with an image."""
    return [
        {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
        "Please analyze the image above.",
    ]


@server.prompt()
def test_input_required_result_prompt(ctx: Context) -> Any:
    """A prompt that first asks the user what context to use."""
    answer = elicitation.response(ctx, "user_context", CONTEXT)
    if answer is MISSING:
        return input_required({"user_context": CONTEXT})
    context = answer.content["context"] if isinstance(answer, Accepted) else "none given"
    return f"Answer using this context: {context}"


@server.completion("ref/prompt", "test_prompt_with_arguments")
def complete_prompt_argument(argument: str, value: str, context: Mapping[str, str]) -> list[str]:
    """Suggest values for test_prompt_with_arguments that start with what was typed."""
    suggestions = {"arg1": ["testValue1", "alpha"], "arg2": ["testValue2", "beta"]}
    return [s for s in suggestions.get(argument, []) if s.startswith(value)]


# --- the tasks extension ----------------------------------------------------------------
# The fixtures the runner's tasks-* scenarios name. Each task tool returns
# background(work): a task when the client declared the extension, inline otherwise.


@server.tool
def greet(name: str) -> str:
    """Greet someone, at once: never a task."""
    return f"Hello, {name}!"


@server.tool(task="optional")
def slow_compute(seconds: float, label: str = "") -> Any:
    """Wait ``seconds``, then report; cancellation stops the wait."""

    async def work(ctx: Context) -> str:
        await asyncio.sleep(seconds)
        return f"Computed {label or 'result'} after {seconds}s"

    return background(work, "Computing")


@server.tool(task="required")
def failing_job() -> Any:
    """A task whose tool fails after about a second (a tool error, so completed)."""

    async def work(ctx: Context) -> ToolError:
        await asyncio.sleep(1)
        return tool_error("The job failed: simulated tool failure")

    return background(work)


@server.tool(task="optional")
def protocol_error_job() -> Any:
    """A task that ends in a JSON-RPC error (so failed)."""

    async def work(ctx: Context) -> str:
        raise InternalError("Simulated internal failure")

    return background(work)


DELETE = _form("Really delete the file?", confirm={"type": "boolean", "description": "Delete?"})
EITHER = elicitation.form(
    "A detail, please",
    {
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
    },
)


@server.tool(task="optional")
def confirm_delete(filename: str) -> Any:
    """A task that asks for confirmation through tasks/get and tasks/update."""

    async def work(ctx: Context) -> Result:
        answer = elicitation.response(ctx, "confirm", DELETE)
        if answer is MISSING:
            return input_required({"confirm": DELETE})
        if isinstance(answer, Accepted) and answer.content.get("confirm") is True:
            return f"Deleted {filename}"
        return f"Kept {filename}"

    return background(work)


@server.tool(task="optional")
def multi_input() -> Any:
    """A task that asks two questions at once; either may be answered first."""

    async def work(ctx: Context) -> Result:
        requests = {"first": EITHER, "second": EITHER}
        answers, unanswered = _answers(ctx, requests)
        if unanswered:
            return input_required(unanswered)
        return f"Got {len(answers)} answers"

    return background(work)


@server.tool(task="required")
def test_tool_with_task(ctx: Context) -> Any:
    """Ask the user's name by MRTR, then finish the greeting as a task."""
    answer = elicitation.response(ctx, "user_name", NAME)
    if answer is MISSING:
        return input_required({"user_name": NAME})
    name = answer.content["name"] if isinstance(answer, Accepted) else "whoever you are"

    async def work(task: Context) -> str:
        return f"Hello, {name}!"

    return background(work)
