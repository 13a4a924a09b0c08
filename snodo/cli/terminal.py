"""The person at the terminal, as a client's input handlers: ``snodo call`` asks them.

A form becomes one prompt per field, with its title, type, choices (numbered; a number or
the value itself answers), default (an empty line takes it; an optional field without
one is left out) and the form's own checks (``snodo.asking.form_schema``), asking again until a
value fits; before the fields, the person may decline or cancel the whole form. A form
of one yes-or-no field (a confirmation) is one question, which takes decline and cancel
too. A URL
request prints the page and asks for consent. A sampling request prints the messages and
takes the reply typed (or, with ``sampling_command``, what that program prints when the
messages are piped to it as JSON). Roots are the paths given.

Not interactive: ``answers`` holds what to answer, keyed by the question's message (a
form: an object of field values, or ``"decline"``/``"cancel"``; a URL: ``"accept"`` or
``"decline"``; sampling under the key ``"sampling"``: the reply's text, or a list used in
order). A question with no answer there is asked on the terminal, or with ``no_input``
declined (a sampling request then fails, which the server sees as the client's error).
Prompts go to stderr and answers come from stdin, so ``--output json`` keeps stdout clean.

Standard input at its end (``< /dev/null``, a pipe that ended, Ctrl-D) answers nothing
more: the question being asked and every later one are cancelled at once (a sampling
request fails), never asked again, and ``input_ended`` tells the caller to exit non-zero.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from snodo.asking.form_schema import (
    CheckedSchema,
    Field,
    RejectedValueError,
    check_schema,
    check_value,
)

__all__ = ["Terminal"]

DECLINE = {"action": "decline"}
CANCEL = {"action": "cancel"}


class InputEnded(Exception):
    """Standard input ended while a question waited for its answer."""


class Terminal:
    """Input handlers (``Client(elicitation=..., url_elicitation=..., sampling=...,
    roots=...)``) that ask the person at this terminal."""

    def __init__(
        self,
        *,
        answers: Mapping[str, Any] | None = None,
        no_input: bool = False,
        sampling_command: str | None = None,
        roots: list[str] | None = None,
    ) -> None:
        self.answers = dict(answers or {})
        self.no_input = no_input
        self.sampling_command = sampling_command
        self.roots = [Path(root).resolve() for root in roots or []]
        self._samples = 0
        self.input_ended = False

    def handlers(self) -> dict[str, Any]:
        """The ``Client`` keyword arguments: every handler, roots only when given."""
        handlers: dict[str, Any] = {
            "elicitation": self.form,
            "url_elicitation": self.url,
            "sampling": self.sample,
        }
        if self.roots:
            handlers["roots"] = self.list_roots
        return handlers

    # -- talking to the person -----------------------------------------------------------

    @staticmethod
    def say(text: str) -> None:
        """A line to the person (stderr)."""
        print(text, file=sys.stderr, flush=True)

    async def ask(self, prompt: str) -> str:
        """One line from the person, without blocking the loop; ``InputEnded`` at the
        end of standard input (then and for every later question)."""

        def read() -> str:
            print(prompt, end="", file=sys.stderr, flush=True)
            return sys.stdin.readline()

        line = "" if self.input_ended else await asyncio.to_thread(read)
        if not line:  # an empty line is "\n"; nothing at all is the end of input
            if not self.input_ended:
                self.input_ended = True
                self.say("\n  (standard input ended: cancelled)")
            raise InputEnded
        return line.rstrip("\r\n")

    # -- elicitation ---------------------------------------------------------------------

    async def form(self, params: dict[str, Any]) -> dict[str, Any]:
        """A form-mode ``elicitation/create``, answered field by field."""
        message = str(params.get("message", ""))
        given = self.answers.get(message)
        if isinstance(given, str):
            return {"action": given if given in ("decline", "cancel") else "accept"}
        if isinstance(given, dict):
            return {"action": "accept", "content": given}
        if self.no_input:
            return DECLINE
        if self.input_ended:
            return CANCEL
        checked = _lenient(params.get("requestedSchema"))
        self.say(f"\n? {message}")
        fields = list(checked.fields.items())
        if len(fields) == 1 and fields[0][1].kind == "boolean":
            return await self._checkbox(checked, fields[0][0], fields[0][1])
        try:
            choice = (await self.ask("  answer it? [Y]es / [n]o, decline / [c]ancel: ")).lower()
            if choice in ("n", "no", "decline"):
                return DECLINE
            if choice in ("c", "cancel"):
                return CANCEL
            content: dict[str, Any] = {}
            for name, field in checked.fields.items():
                value = await self._field(checked, name, field)
                if value is not None:
                    content[name] = value
        except InputEnded:
            return CANCEL
        return {"action": "accept", "content": content}

    async def _checkbox(self, checked: CheckedSchema, name: str, field: Field) -> dict[str, Any]:
        """A form of one yes-or-no field (a confirmation) is one question: its answer,
        or the form declined or cancelled, never asked twice."""
        prop = checked.schema["properties"][name]
        title = prop.get("title") or name
        default = prop.get("default")
        shown = "y/n" + (f", default {json.dumps(default)}" if isinstance(default, bool) else "")
        while True:
            try:
                line = (await self.ask(f"  {title} ({shown}; or decline, cancel): ")).strip()
            except InputEnded:
                return CANCEL
            if line.lower() == "decline":
                return DECLINE
            if line.lower() in ("c", "cancel"):
                return CANCEL
            if not line:
                if isinstance(default, bool):
                    return {"action": "accept", "content": {name: default}}
                if name not in checked.required:
                    return {"action": "accept", "content": {}}
                self.say("    an answer is required")
                continue
            try:
                value = check_value(field, _parse(line, field, []))
            except (RejectedValueError, ValueError) as exc:
                self.say(f"    {title} {exc}")
                continue
            return {"action": "accept", "content": {name: value}}

    async def _field(self, checked: CheckedSchema, name: str, field: Field) -> Any:
        prop = checked.schema["properties"][name]
        title = prop.get("title") or name
        required = name in checked.required
        default = prop.get("default")
        labels = _choices(prop, field)
        if labels:
            self.say(f"  {title}, one of:")
            for number, (value, label) in enumerate(labels, 1):
                shown = value if label == value else f"{label} ({value})"
                self.say(f"    {number}) {shown}")
        hint = {"boolean": "y/n", "integer": "a whole number", "number": "a number"}.get(
            field.kind, "comma-separated" if field.kind == "multi" else ""
        )
        if field.format:
            hint = field.format
        suffix = ", ".join(part for part in (hint, None if required else "optional") if part)
        if default is not None:
            suffix += f"{', ' if suffix else ''}default {json.dumps(default, ensure_ascii=False)}"
        prompt = f"  {title}{f' ({suffix})' if suffix else ''}: "
        while True:
            line = (await self.ask(prompt)).strip()
            if not line:
                if default is not None:
                    return default
                if not required:
                    return None
                self.say("    an answer is required")
                continue
            try:
                return check_value(field, _parse(line, field, labels))
            except (RejectedValueError, ValueError) as exc:
                self.say(f"    {title} {exc}")

    async def url(self, params: dict[str, Any]) -> dict[str, Any]:
        """A URL-mode ``elicitation/create``: the page shown, consent asked."""
        message, page = str(params.get("message", "")), str(params.get("url", ""))
        given = self.answers.get(message, self.answers.get(page))
        if isinstance(given, str):
            return {"action": given if given in ("decline", "cancel") else "accept"}
        if self.no_input:
            return DECLINE
        if self.input_ended:
            return CANCEL
        self.say(f"\n? {message}\n  {page}")
        try:
            choice = (await self.ask("  open it? [y/N]: ")).strip().lower()
        except InputEnded:
            return CANCEL
        return {"action": "accept"} if choice in ("y", "yes") else DECLINE

    # -- sampling and roots ----------------------------------------------------------------

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """A ``sampling/createMessage``: the reply typed, piped or from the answers."""
        given = self.answers.get("sampling")
        if isinstance(given, list):
            given = given[self._samples] if self._samples < len(given) else None
            self._samples += 1
        if isinstance(given, str):
            return _reply(given, "answers-file")
        if self.sampling_command:
            return _reply(await _run(self.sampling_command, params), "sampling-command")
        if self.no_input:
            raise ValueError("the server asked for a model's reply, and --no-input gives none")
        if self.input_ended:
            raise ValueError("the server asked for a model's reply after standard input ended")
        self.say("\n? the server asks your model:")
        for message in params.get("messages", []):
            content = message.get("content")
            text = content.get("text") if isinstance(content, dict) else None
            self.say(f"  [{message.get('role')}] {text if text is not None else content}")
        try:
            return _reply(await self.ask("  reply as the model: "), "terminal")
        except InputEnded:
            raise ValueError("standard input ended before the model's reply") from None

    def list_roots(self, params: dict[str, Any]) -> dict[str, Any]:
        """``roots/list``: the paths given with ``--root``."""
        return {"roots": [{"uri": root.as_uri(), "name": root.name} for root in self.roots]}


def _lenient(schema: Any) -> CheckedSchema:
    """The form's schema, checked; a title or description beside the properties (which
    some servers send) is let go, since the person reads the fields, not the form."""
    try:
        return check_schema(schema)
    except ValueError:
        if not isinstance(schema, dict):
            raise
        kept = ("$schema", "type", "properties", "required")
        return check_schema({key: value for key, value in schema.items() if key in kept})


def _choices(prop: Mapping[str, Any], field: Field) -> list[tuple[str, str]]:
    """(value, label) of each choice a field offers; none for free input."""
    if field.kind == "multi":
        items = prop.get("items") or {}
        options = items.get("anyOf") or [{"const": v, "title": v} for v in items.get("enum", [])]
        return [(str(o["const"]), str(o.get("title", o["const"]))) for o in options]
    if "oneOf" in prop:
        return [(str(o["const"]), str(o.get("title", o["const"]))) for o in prop["oneOf"]]
    if "enum" in prop:
        names = prop.get("enumNames") or prop["enum"]
        return [(str(v), str(n)) for v, n in zip(prop["enum"], names, strict=False)]
    return []


def _parse(line: str, field: Field, labels: list[tuple[str, str]]) -> Any:
    """What a typed line means for ``field`` (a number picks a choice)."""

    def pick(text: str) -> str:
        text = text.strip()
        if text.isdigit() and 1 <= int(text) <= len(labels):
            return labels[int(text) - 1][0]
        return text

    if field.kind == "boolean":
        lowered = line.lower()
        if lowered in ("y", "yes", "true", "1"):
            return True
        if lowered in ("n", "no", "false", "0"):
            return False
        raise ValueError("must be y or n")
    if field.kind == "integer":
        return int(line)
    if field.kind == "number":
        number = float(line)
        return int(number) if number.is_integer() and "." not in line else number
    if field.kind == "multi":
        return [pick(part) for part in line.split(",") if part.strip()]
    return pick(line) if labels else line


def _reply(text: str, model: str) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": model}


async def _run(command: str, params: Mapping[str, Any]) -> str:
    """What ``command`` prints when the sampling request is piped to it as JSON."""
    done = await asyncio.to_thread(
        subprocess.run,
        shlex.split(command),
        input=json.dumps(params),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ValueError(f"--sampling-cmd exited with {done.returncode}: {done.stderr.strip()}")
    return done.stdout.strip()
