"""A read-only preference flow that asks the user mid-call, as a tool, a resource and a prompt.

Round 1 asks for a theme and a language at once. Whatever was answered is kept in
sealed request state, and only what is still missing is asked again. Once both are
known, one last question asks for confirmation; then the flow completes with a
summary. Declining or cancelling at any point ends it with "nothing changed". Nothing
is written anywhere: the flow only reports what it would save.

That flow is written in the explicit style (``elicitation.response`` and
``input_required``). The ``greeting`` tool is the declarative style: three parameters
the user and the client answer (a form, a sample of the client's model, its roots),
all asked in one round.

    snodo run examples/preferences.py:server --transport http --port 8000
    python examples/preferences.py --check     # drive every round in-process

The state secret comes from SNODO_STATE_SECRET (hex, at least 32 bytes); without it a
random one is made per process, which suits one process only: behind a load balancer
every worker must share it (or rotated keys: Server(state=State(keys=[...])), see snodo.core.state).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
from collections.abc import Iterator
from typing import Annotated, Any

from snodo import Ask, Context, InputRequired, State, elicitation, input_required, roots, sampling
from snodo.asking import Root
from snodo.client import Client, Flow, RequestError
from snodo.client.transports import MemoryTransport
from snodo.server import LegacyLimits, Server, notification_bus
from snodo.stores import RedisGuard

SECRET = (
    bytes.fromhex(os.environ["SNODO_STATE_SECRET"])
    if os.environ.get("SNODO_STATE_SECRET")
    else secrets.token_bytes(32)
)

GUARD = os.environ.get("SNODO_REPLAY_GUARD")

THEME = elicitation.form(
    "Which theme do you prefer?",
    {
        "type": "object",
        "properties": {
            "theme": {"type": "string", "title": "Theme", "enum": ["light", "dark", "system"]}
        },
        "required": ["theme"],
    },
)
LANGUAGE = elicitation.form(
    "Which language should the interface use?",
    {
        "type": "object",
        "properties": {
            "language": {
                "type": "string",
                "title": "Language",
                "oneOf": [
                    {"const": "en", "title": "English"},
                    {"const": "de", "title": "Deutsch"},
                    {"const": "ja", "title": "日本語"},
                ],
            }
        },
        "required": ["language"],
    },
)
CONFIRM = elicitation.form(
    "Save these preferences?",
    {
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": "Save", "default": True}},
        "required": ["confirm"],
    },
)
QUESTIONS = {"theme": THEME, "language": LANGUAGE}
NOTICE = elicitation.url(
    "Please open our privacy notice before changing preferences.",
    "https://example.com/privacy",
)
GREETING = sampling.create_message(
    [sampling.message("user", "Write a one-line greeting for a user of this app.")],
    max_tokens=60,
)

server = Server(
    "preferences",
    "1.0.0",
    instructions="Ask the user for display preferences; nothing is written.",
    # Each request state is one-time (the default): a replayed final retry is refused,
    # not run again. The guard is this process's own, or, with SNODO_REPLAY_GUARD=
    # redis://..., one every worker shares (docs/deploy.md).
    state=State(secret=SECRET, guard=RedisGuard(GUARD) if GUARD else True),
    # Legacy sessions on any worker: SNODO_LEGACY_STORE=redis://... (docs/deploy.md), with
    # SNODO_NOTIFY=redis://... for list changes and resource updates raised elsewhere.
    legacy=LegacyLimits(store=os.environ.get("SNODO_LEGACY_STORE") or None),
    notifications=notification_bus(os.environ.get("SNODO_NOTIFY") or "memory:"),
)


def preference_flow(ctx: Context) -> InputRequired | str:
    """One step of the flow: ask for what is missing, or finish."""
    # The server verified any echoed state before this ran: forged state never gets here.
    known: dict[str, Any] = dict(ctx.state_data or {})
    for key, request in QUESTIONS.items():
        answer = elicitation.response(ctx, key, request)
        if isinstance(answer, elicitation.Declined | elicitation.Cancelled):
            return "Nothing changed: you chose not to answer."
        if isinstance(answer, elicitation.Accepted):
            known[key] = answer.content[key]
    missing = {key: QUESTIONS[key] for key in QUESTIONS if key not in known}
    if not missing:
        confirm = elicitation.response(ctx, "confirm", CONFIRM)
        if isinstance(confirm, elicitation.Accepted):
            if confirm.content.get("confirm") is True:
                return f"Would save: theme {known['theme']}, language {known['language']}."
            return "Nothing changed: not confirmed."
        if isinstance(confirm, elicitation.Declined | elicitation.Cancelled):
            return "Nothing changed: not confirmed."
        missing = {"confirm": CONFIRM}
    return input_required(missing, state=known)


@server.tool(annotations={"readOnlyHint": True})
def preferences(ctx: Context) -> InputRequired | str:
    """Ask the user for theme and language preferences (nothing is saved)."""
    return preference_flow(ctx)


@server.tool(annotations={"readOnlyHint": True})
def privacy_notice(ctx: Context) -> InputRequired | str:
    """Ask the user to open the privacy notice in their browser (URL mode).

    Accepting means the user agreed to open the page, not that they read it: the server
    learns nothing about the visit, and says so.
    """
    answer = elicitation.response(ctx, "notice", NOTICE)
    if isinstance(answer, elicitation.Accepted):
        return "You agreed to open the privacy notice; whether you read it is not known."
    if isinstance(answer, elicitation.Declined | elicitation.Cancelled):
        return "You chose not to open the privacy notice."
    return input_required({"notice": NOTICE})


@server.tool(annotations={"readOnlyHint": True})
def greeting(
    language: Annotated[str | None, Ask(LANGUAGE, pick="language")],
    text: Annotated[str, Ask(GREETING)],
    folders: Annotated[list[Root], Ask(roots.list_roots())],
) -> str:
    """Greet the user in their language and workspace: three questions, one round."""
    if language is None:  # declined or dismissed
        return "Nothing changed: you chose not to answer."
    where = ", ".join(str(root.name or root.uri) for root in folders) or "no folders"
    return f"{text} [{language}; {where}]"


@server.resource("prefs://summary", name="preferences", mime_type="text/plain")
def preferences_resource(ctx: Context) -> InputRequired | str:
    """The user's preferences, asked for on read."""
    return preference_flow(ctx)


@server.prompt(description="A prompt that tells the model the user's preferences.")
def preferences_prompt(ctx: Context) -> InputRequired | str:
    outcome = preference_flow(ctx)
    return outcome if isinstance(outcome, InputRequired) else f"User preferences: {outcome}"


# -- --check: drive every round in-process and compare with what must happen -----------


class Script:
    """Answers the form questions from a fixed script, and records what was asked."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        field = next(iter(params["requestedSchema"]["properties"]))
        self.asked.append(field)
        answer = self.answers.get(field, "cancel")  # unscripted questions are dismissed
        if answer in ("decline", "cancel"):
            return {"action": answer}
        return {"action": "accept", "content": {field: answer}}


async def _check_case(
    kind: str, answers: dict[str, Any], expected_text: str, expected_asked: list[str]
) -> list[str]:
    script = Script(answers)
    client = Client(MemoryTransport(server), elicitation=script)
    if kind == "tool":
        result = await client.call_tool("preferences")
        text = result.content[0].text
    elif kind == "resource":
        result = await client.read_resource("prefs://summary")
        text = result.contents[0].text
    else:
        result = await client.get_prompt("preferences_prompt")
        text = result.messages[0].content.text.removeprefix("User preferences: ")
    problems = []
    if text != expected_text:
        problems.append(f"{kind} {answers}: got {text!r}, expected {expected_text!r}")
    if script.asked != expected_asked:
        problems.append(f"{kind} {answers}: asked {script.asked}, expected {expected_asked}")
    return problems


CASES: list[tuple[dict[str, Any], str, list[str]]] = [
    (
        {"theme": "dark", "language": "de", "confirm": True},
        "Would save: theme dark, language de.",
        ["theme", "language", "confirm"],
    ),
    (
        {"theme": "light", "language": "ja", "confirm": False},
        "Nothing changed: not confirmed.",
        ["theme", "language", "confirm"],
    ),
    ({"theme": "decline"}, "Nothing changed: you chose not to answer.", ["theme", "language"]),
    (
        {"theme": "dark", "language": "cancel"},
        "Nothing changed: you chose not to answer.",
        ["theme", "language"],
    ),
]


async def _partial_case() -> list[str]:
    """Answer only the theme first: it is kept in state and only the language is re-asked."""
    rounds: list[list[str]] = []
    answers: Iterator[dict[str, Any]] = iter(
        [{"theme": "system"}, {"language": "en"}, {"confirm": True}]
    )

    client = Client(MemoryTransport(server), elicitation=Script({}))
    flow = await client.call_tool("preferences", manual=True)
    while isinstance(flow, Flow):
        asked = sorted(flow.result.model_dump(by_alias=True)["inputRequests"])
        rounds.append(asked)
        given = next(answers)
        flow = await client.resume(
            flow,
            {k: {"action": "accept", "content": {k: v}} for k, v in given.items() if k in asked},
            manual=True,
        )
    text = flow.content[0].text
    problems = []
    if rounds != [["language", "theme"], ["language"], ["confirm"]]:
        problems.append(f"partial answers: rounds asked {rounds}")
    if text != "Would save: theme system, language en.":
        problems.append(f"partial answers: got {text!r}")
    return problems


async def _url_case() -> list[str]:
    """URL mode: consent only; and a client that cannot open URLs is never asked."""
    problems = []
    opened: list[dict[str, Any]] = []

    def consent(params: dict[str, Any]) -> dict[str, Any]:
        opened.append(params)
        return {"action": "accept"}

    client = Client(MemoryTransport(server), url_elicitation=consent)
    text = (await client.call_tool("privacy_notice")).content[0].text
    if not text.startswith("You agreed to open") or opened[0]["url"] != NOTICE["params"]["url"]:
        problems.append(f"url consent: got {text!r} after {opened}")
    try:
        await Client(MemoryTransport(server), elicitation=Script({})).call_tool("privacy_notice")
        problems.append("url consent: a client without url elicitation was asked")
    except RequestError as error:
        if error.required_capabilities != {"elicitation": {"url": {}}}:
            problems.append(f"url consent: wrong refusal {error.data}")
    return problems


async def _greeting_case() -> list[str]:
    """The declarative tool: all three questions come in one round, then it runs once."""
    sampled: list[dict[str, Any]] = []

    def sample(params: dict[str, Any]) -> dict[str, Any]:
        sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "Hallo!"}, "model": "m"}

    def where(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///home/ana/notes", "name": "notes"}]}

    script = Script({"language": "de"})
    client = Client(MemoryTransport(server), elicitation=script, sampling=sample, roots=where)
    flow = await client.call_tool("greeting", manual=True)
    if not isinstance(flow, Flow):
        return [f"greeting: completed without asking: {flow}"]
    asked = sorted(flow.result.model_dump(by_alias=True)["inputRequests"])
    text = (await client.call_tool("greeting")).content[0].text
    problems = []
    if asked != ["folders", "language", "text"]:
        problems.append(f"greeting: first round asked {asked}")
    if text != "Hallo! [de; notes]" or len(sampled) != 1:
        problems.append(f"greeting: got {text!r} after {len(sampled)} sample(s)")
    return problems


async def check() -> int:
    problems: list[str] = []
    for kind in ("tool", "resource", "prompt"):
        for answers, text, asked in CASES:
            problems += await _check_case(kind, answers, text, asked)
    problems += await _partial_case()
    problems += await _url_case()
    problems += await _greeting_case()
    for problem in problems:
        print(f"FAIL {problem}")
    total = 3 * len(CASES) + 3
    print(f"preferences: {total - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="drive every round in-process")
    if parser.parse_args().check:
        sys.exit(asyncio.run(check()))
    parser.print_help()
