"""``snodo list`` and ``snodo call``: the terminal client, driven through a pseudo-terminal
as a person would (typed answers, a choice by number and by value, a default, a URL
confirmation, a wrong value asked again) and with ``--answers`` as a script would; over
stdio and HTTP, against snodo's example, an official SDK 2026-07-28 server and a legacy
server on PyPI mcp 1.30."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.processes import SNODO, serving, snodo, snodo_run
from tests.support.terminal import Typing

TARGET = "examples/preferences.py:server"
SAVED = "Would save: theme dark, language ja."
LEGACY = f"{legacy_sdk_python()} tests/client/legacy_server.py stdio"
MODERN = f"{sys.executable} tests/client/official_modern_server.py stdio"


def answer_the_preferences(person: Typing, wrong_first: bool = False) -> None:
    person.expect("Which theme do you prefer?")
    person.expect("answer it?")
    person.line("y")
    person.expect("3) system")
    person.expect("Theme: ")
    if wrong_first:
        person.line("7")
        person.expect("Theme is not one of the options")
        person.expect("Theme: ")
    person.line("2")  # a choice by its number
    person.expect("answer it?")
    person.line("")  # yes is the default
    person.expect("3) 日本語 (ja)")
    person.expect("Language: ")
    person.line("ja")  # a choice by its value
    person.expect("Save these preferences?")
    # One yes-or-no field: one question, not "answer it?" first.
    person.expect("Save (y/n, default true; or decline, cancel): ")
    person.line("")  # the default


def test_a_person_answers_a_tool_over_stdio() -> None:
    person = Typing([*SNODO, "call", TARGET, "preferences"])
    answer_the_preferences(person, wrong_first=True)
    status, seen = person.finish()
    assert status == 0, seen
    assert seen.rstrip().endswith(SAVED)


def test_over_http_a_url_a_resource_and_a_prompt() -> None:
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        url = f"{server.base}/mcp"
        person = Typing([*SNODO, "call", url, "privacy_notice"])
        person.expect("Please open our privacy notice before changing preferences.")
        person.expect("https://example.com/privacy")
        person.expect("open it? [y/N]: ")
        person.line("y")
        status, seen = person.finish()
        assert status == 0 and "You agreed to open the privacy notice" in seen, seen
        person = Typing([*SNODO, "call", url, "--resource", "prefs://summary"])
        answer_the_preferences(person)
        status, seen = person.finish()
        assert status == 0 and seen.rstrip().endswith(SAVED), seen
        person = Typing([*SNODO, "call", url, "--prompt", "preferences_prompt", "--era", "legacy"])
        answer_the_preferences(person)
        status, seen = person.finish()
        assert status == 0 and f"User preferences: {SAVED}" in seen, seen


def test_a_script_answers_from_a_file(tmp_path: Path) -> None:
    answers = {
        "Which theme do you prefer?": {"theme": "dark"},
        "Which language should the interface use?": {"language": "ja"},
        "Save these preferences?": {"confirm": True},
        "sampling": "Hallo!",
    }
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    done = snodo("call", TARGET, "preferences", "--answers", str(path), "--no-input")
    assert (done.returncode, done.stdout.strip()) == (0, SAVED), done.stderr
    folder = tmp_path / "notes"
    folder.mkdir()
    greeting = ["call", TARGET, "greeting", "--answers", str(path), "--root", str(folder)]
    done = snodo(*greeting, "--output", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"] == [{"type": "text", "text": "Hallo! [ja; notes]"}]
    declined = snodo("call", TARGET, "preferences", "--no-input")
    assert declined.stdout.strip() == "Nothing changed: you chose not to answer."


def test_an_official_sdk_server_and_a_legacy_one() -> None:
    person = Typing([*SNODO, "call", "--stdio", LEGACY, "forecast", "days=2"])
    person.expect("Which city?")
    person.expect("answer it?")
    person.line("y")
    person.expect("City: ")  # the title pydantic gave the field
    person.line("Oslo")
    status, seen = person.finish()
    assert status == 0 and "Oslo: sunny for 2 days" in seen, seen
    person = Typing([*SNODO, "call", "--stdio", MODERN, "forecast", "days=3"])
    person.expect("answer it?")
    person.line("y")
    person.expect("city: ")
    person.line("Bergen")
    status, seen = person.finish()
    assert status == 0 and "Bergen: sunny for 3 days" in seen, seen
    listed = snodo("list", "--stdio", LEGACY, "--output", "json")
    assert listed.returncode == 0, listed.stderr
    tools = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
    assert {"forecast", "summarize", "count_roots"} <= tools


def test_list_prints_every_kind() -> None:
    done = snodo("list", TARGET)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [
        "tools (3)",
        "  preferences()  Ask the user for theme and language preferences (nothing is saved).",
    ]
    assert "resources (1)\n  prefs://summary  The user's preferences, asked for on read." in (
        done.stdout
    )
    assert "prompts (1)\n  preferences_prompt()" in done.stdout


def test_errors_are_one_line() -> None:
    unknown = snodo("call", TARGET, "nope")
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines()[-1].startswith("snodo: the server has no tool")
    bad = snodo("call", TARGET, "preferences", "oops")
    assert bad.stderr.strip() == "snodo: 'oops': arguments are key=value"
    nothing = snodo("list", "not-a-target")
    assert nothing.stderr.strip().startswith("snodo: 'not-a-target' is not a URL")
    helped = snodo("call", "--help")
    assert "snodo call examples/preferences.py:server preferences" in helped.stdout


def test_the_end_of_input_cancels_at_once() -> None:
    """No answer can come once stdin has ended: the question is cancelled, never asked
    again, and the call exits 1 (it printed "an answer is required" forever before)."""
    closed = snodo("call", TARGET, "preferences")
    assert closed.returncode == 1, closed.stderr
    assert closed.stderr.count("answer it?") == 1, closed.stderr
    assert closed.stderr.strip().splitlines()[-1] == (
        "snodo: standard input ended during a question, which was cancelled"
    )
    # A pipe that ends inside the form: the field asked once, then cancelled.
    piped = snodo("call", TARGET, "preferences", input="y\n")
    assert piped.returncode == 1, piped.stderr
    assert piped.stderr.count("Theme: ") == 1, piped.stderr
    assert "an answer is required" not in piped.stderr
    assert "(standard input ended: cancelled)" in piped.stderr
    # Ctrl-D on a terminal, at a required field's prompt.
    person = Typing([*SNODO, "call", TARGET, "preferences"])
    person.expect("answer it?")
    person.line("y")
    person.expect("Theme: ")
    person.line("")
    person.expect("an answer is required")
    person.expect("Theme: ")
    person.end_input()
    status, seen = person.finish()
    assert status == 1, seen
    assert seen.count("an answer is required") == 1, seen
    assert "snodo: standard input ended during a question, which was cancelled" in seen


CONFIRMING = """
from typing import Annotated

from pydantic import BaseModel

from snodo import Ask, Server, elicitation

server = Server("confirming", "1.0.0", state_secret=b"k" * 32)


class Sure(BaseModel):
    sure: bool


@server.tool
def wipe(sure: Annotated[bool | None, Ask(elicitation.form("Wipe?", Sure), pick="sure")]) -> str:
    return {None: "left alone", True: "wiped", False: "kept"}[sure]
"""


def test_a_confirmation_is_asked_once(tmp_path: Path) -> None:
    """A form of one yes-or-no field is one question (it was "answer it?" and then the
    field): y and n answer it, decline declines the form."""
    target = tmp_path / "confirming.py"
    target.write_text(CONFIRMING, encoding="utf-8")
    for typed, said in [("y", "wiped"), ("n", "kept"), ("decline", "left alone")]:
        done = snodo("call", f"{target}:server", "wipe", input=f"{typed}\n")
        assert (done.returncode, done.stdout) == (0, f"{said}\n"), done.stderr
        assert done.stderr.count("sure (y/n; or decline, cancel): ") == 1, done.stderr
        assert "answer it?" not in done.stderr
    again = snodo("call", f"{target}:server", "wipe", input="maybe\ny\n")
    assert again.stdout == "wiped\n" and "sure must be y or n" in again.stderr
