"""Prompts: arguments from the function signature, messages from what it returns."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from snodo.core.errors import InvalidParams
from snodo.revisions.authoring import PromptMessage
from snodo.server.invoke import Invoker, UserFunction, described, invoker, listed_fields
from snodo.server.options import PromptOptions
from snodo.server.threads import Threads

__all__ = ["Prompt", "make_prompt", "prompt_messages"]


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    definition: dict[str, Any]
    invoker: Invoker
    required: frozenset[str]
    known: frozenset[str]
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs, checked before the handler runs (none: open)."""

    def check_arguments(self, arguments: Mapping[str, Any]) -> dict[str, str]:
        """server/prompts.mdx: missing required arguments are invalid params (-32602)."""
        missing = sorted(self.required - set(arguments))
        if missing:
            raise InvalidParams(f"Missing required argument(s) for prompt {self.name}: {missing}")
        unknown = sorted(set(arguments) - self.known)
        if unknown and not self.invoker.accepts_any:
            raise InvalidParams(f"Unknown argument(s) for prompt {self.name}: {unknown}")
        return {key: str(value) for key, value in arguments.items()}


def make_prompt(
    function: UserFunction, options: PromptOptions | None = None, *, threads: Threads | None = None
) -> Prompt:
    """A prompt from an author's function and its options (``PromptOptions``)."""
    options = options or {}
    inline, timeout = options.get("inline", False), options.get("timeout")
    arguments = options.get("arguments")
    run = invoker(function, inline=inline, timeout=timeout, threads=threads)
    if arguments is None:
        arguments = [
            {"name": p.name, "required": p.default is inspect.Parameter.empty}
            for p in run.parameters
        ]
    prompt_name = options.get("name") or function.__name__
    definition = described(
        {"name": prompt_name}, function, options.get("title"), options.get("description")
    )
    if arguments:
        definition["arguments"] = [dict(a) for a in arguments]
    definition.update(listed_fields(icons=options.get("icons"), meta=options.get("meta")))
    return Prompt(
        name=prompt_name,
        definition=definition,
        invoker=run,
        required=frozenset(str(a["name"]) for a in arguments if a.get("required")),
        known=frozenset(str(a["name"]) for a in arguments),
        scopes=frozenset(options.get("scopes", ())),
    )


def _message(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"role": "user", "content": {"type": "text", "text": value}}
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    try:
        PromptMessage.model_validate(value)
    except ValidationError as exc:
        raise TypeError("a prompt message must be a str or a PromptMessage") from exc
    return dict(value)


def prompt_messages(value: Any) -> dict[str, Any]:
    """What a prompt function returned, as a GetPromptResult (without resultType)."""
    if isinstance(value, BaseModel) and "messages" in type(value).model_fields:
        result: dict[str, Any] = value.model_dump(mode="json", by_alias=True)
        result.pop("resultType", None)
        return result
    if isinstance(value, dict) and "messages" in value:
        return {**value, "messages": [_message(m) for m in value["messages"]]}
    items = value if isinstance(value, (list, tuple)) else [value]
    return {"messages": [_message(item) for item in items]}
