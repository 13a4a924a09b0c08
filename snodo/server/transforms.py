"""Tools made from what a server already has: a tool under a new shape, and a resource
or a prompt offered as a tool.

A ``ToolShape`` says how a tool is offered: its ``name``, ``title`` and
``description``, the arguments it ``hide``s (each filled with a fixed value, or computed
from the request's ``Context`` by a function, sync or async) and those it ``rename``s.
The caller sees the reshaped input schema and passes the new arguments; the original
tool is called with the arguments it was written for, checked against its own schema
first, and answers as it would (its output schema, its questions, its task support, its
scopes). A hidden value always wins over anything a caller passes by that name.
``transformed`` makes the ``Tool`` that ``server.transform`` registers; a gateway
reshapes what a backend lists and calls with the same ``ToolShape``
(``snodo.gateway.shaping``).

``resource_tool`` and ``prompt_tool`` make the tools ``server.resource_as_tool`` and
``server.prompt_as_tool`` register, for hosts that only call tools. They answer through
the server's own ``resources/read`` and ``prompts/get`` (``Read``), so what the caller
may not see stays hidden, a backend's resources and prompts are reached as the server's,
and a resource or prompt that asks the user asks through the tool.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from snodo.core import jsonrpc
from snodo.core.context import Context, refilled
from snodo.core.errors import McpError
from snodo.core.http_headers import header_params
from snodo.core.result import ToolError
from snodo.core.types import Outcome
from snodo.server.invoke import invoker
from snodo.server.prompts import Prompt
from snodo.server.resources import Resource, ResourceTemplate
from snodo.server.schemas import compile_schema
from snodo.server.tools import Tool, ToolDefinitionError

__all__ = ["Read", "ToolShape", "prompt_tool", "resource_tool", "tool_name", "transformed"]

Read = Callable[[Context, str, dict[str, Any]], Awaitable[Outcome]]
"""Answers one of the server's methods for a tool's request: ``read(ctx, method, params)``."""

_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_.-]+")


def tool_name(prefix: str, name: str) -> str:
    """A tool name made of ``prefix`` and an item's name, its other characters as ``_``."""
    return (prefix + _NAME_CHARACTERS.sub("_", name))[:128]


@dataclass(frozen=True)
class ToolShape:
    """How a tool is offered: a new name, title or description, hidden and renamed
    arguments. ``hide`` maps an argument to its value, or to a function of the
    ``Context`` giving it; ``rename`` maps an argument to the name it is offered by."""

    name: str | None = None
    title: str | None = None
    description: str | None = None
    hide: Mapping[str, Any] = field(default_factory=dict)
    rename: Mapping[str, str] = field(default_factory=dict)

    def input_schema(self, schema: Mapping[str, Any], tool: str) -> dict[str, Any]:
        """``schema`` as the reshaped tool offers it; ToolDefinitionError naming ``tool``
        for an argument it does not have, or two arguments offered by one name."""
        shaped = copy.deepcopy(dict(schema))
        properties = dict(shaped.get("properties") or {})
        for argument in (*self.hide, *self.rename):
            if argument not in properties:
                raise ToolDefinitionError(f"tool {tool} has no argument {argument!r} to reshape")
        for argument in self.hide:
            if argument in self.rename:
                raise ToolDefinitionError(f"tool {tool}: {argument!r} is hidden and renamed")
            del properties[argument]
        offered = {self.rename.get(name, name): value for name, value in properties.items()}
        if len(offered) != len(properties):
            raise ToolDefinitionError(f"tool {tool}: two arguments would be offered by one name")
        shaped["properties"] = offered
        if "required" in shaped:
            shaped["required"] = [
                self.rename.get(name, name) for name in shaped["required"] if name not in self.hide
            ]
        return shaped

    def definition(self, definition: Mapping[str, Any], tool: str) -> dict[str, Any]:
        """A listed tool as the reshaped one is listed."""
        shaped = dict(definition)
        for key, value in (("name", self.name), ("title", self.title)):
            if value is not None:
                shaped[key] = value
        if self.description is not None:
            shaped["description"] = self.description
        shaped["inputSchema"] = self.input_schema(definition.get("inputSchema") or {}, tool)
        return shaped

    async def arguments(self, given: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
        """The original tool's arguments for what the reshaped one was given."""
        original = {new: old for old, new in self.rename.items()}
        renamed = set(self.rename)
        arguments = {
            original.get(name, name): value
            for name, value in given.items()
            if name in original or name not in renamed
        }
        for name, hidden in self.hide.items():
            value = hidden(ctx) if callable(hidden) else hidden
            arguments[name] = await value if inspect.isawaitable(value) else value
        return arguments


def transformed(original: Tool, shape: ToolShape) -> Tool:
    """``original`` offered as ``shape`` says; it runs ``original``'s own checks and code."""
    name = shape.name or original.name
    definition = shape.definition(original.definition, original.name)
    schema = definition["inputSchema"]

    async def run(request_context_: Context, **given: Any) -> Any:
        arguments = await shape.arguments(given, request_context_)
        reason = original.arguments.first_error(arguments)
        if reason is not None:
            raise ToolError(f"Invalid arguments for tool {name}: {reason}")
        return await original.invoker(request_context_, original.bind(arguments))

    try:
        headers = tuple(header_params(schema))
    except ValueError as exc:
        raise ToolDefinitionError(f"tool {name}: {exc}") from exc
    return replace(
        original,
        name=name,
        definition=definition,
        invoker=invoker(run, inline=True),
        arguments=compile_schema(schema),
        model=None,
        plain=None,
        headers=headers,
    )


# -- resources and prompts as tools ---------------------------------------------------------


def _contents_as_content(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A read's contents as a tool's content: text as text, anything else embedded."""
    blocks: list[dict[str, Any]] = []
    for contents in result.get("contents") or ():
        if isinstance(contents.get("text"), str):
            blocks.append({"type": "text", "text": contents["text"]})
        else:
            blocks.append({"type": "resource", "resource": dict(contents)})
    return blocks


def _messages_as_content(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A prompt's messages as a tool's content: each text by its role, other blocks as
    they are, after a line naming the role."""
    blocks: list[dict[str, Any]] = []
    if isinstance(result.get("description"), str):
        blocks.append({"type": "text", "text": result["description"]})
    for message in result.get("messages") or ():
        content = message.get("content") or {}
        role = message.get("role", "user")
        if content.get("type") == "text":
            blocks.append({"type": "text", "text": f"{role}: {content.get('text', '')}"})
        else:
            blocks.extend([{"type": "text", "text": f"{role}:"}, dict(content)])
    return blocks


async def _answered(read: Read, ctx: Context, method: str, params: dict[str, Any]) -> Any:
    """What ``method`` answers, for the tool (a proxy's members kept as bytes read); an
    error is one the model reads as the tool's."""
    try:
        outcome = await read(refilled(ctx, request_method=method), method, params)
    except McpError as exc:
        raise ToolError(exc.message) from None
    if isinstance(outcome, dict):
        return jsonrpc.decode_passthrough({"result": outcome})["result"]
    return outcome


async def _listing(read: Read, ctx: Context, method: str, key: str) -> list[Any]:
    items: list[Any] = []
    cursor: Any = None
    for _ in range(100):
        page = await _answered(read, ctx, method, {} if cursor is None else {"cursor": cursor})
        if not isinstance(page, dict):
            break
        items += page.get(key) or []
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return items


def _tool(
    name: str,
    description: str,
    schema: dict[str, Any],
    run: Callable[..., Awaitable[Any]],
    read_only: bool,
) -> Tool:
    definition: dict[str, Any] = {"name": name, "description": description, "inputSchema": schema}
    if read_only:
        definition["annotations"] = {"readOnlyHint": True}
    return Tool(
        name=name,
        definition=definition,
        invoker=invoker(run, inline=True),
        arguments=compile_schema(schema),
        output=None,
        model=None,
    )


def resource_tool(
    read: Read,
    uri: str | None,
    found: Resource | ResourceTemplate | None,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Tool:
    """The tool that reads ``uri`` (a resource's URI, or a template's, its variables the
    tool's arguments), or, with no URI, any resource by its URI and, without one, lists
    them. ``found``: what the server registered at ``uri``, when it did."""
    if uri is None:
        return _any_resource(read, name or "read_resource", description)
    template = found.template if isinstance(found, ResourceTemplate) else None
    what = found.definition.get("name") if found is not None else None
    tool = name or (tool_name("read_", str(what)) if what else None)
    if tool is None:
        raise ValueError(
            f"name the tool that reads {uri!r}: this server registers no such resource"
        )
    text = description or (found.definition.get("description") if found is not None else None)
    properties: dict[str, Any] = {}
    required: list[str] = []
    if template is not None:
        for variable in template.variables:
            kind = {"type": "array", "items": {"type": "string"}} if variable.explode else None
            properties[variable.name] = kind or {"type": "string"}
            if variable.operator not in ("?", "#"):
                required.append(variable.name)
    schema = {"type": "object", "properties": properties, "required": required}

    async def run(request_context_: Context, **given: Any) -> Any:
        target = uri if template is None else template.expand(given)
        result = await _answered(read, request_context_, "resources/read", {"uri": target})
        return _contents_as_content(result) if isinstance(result, dict) else result

    return _tool(tool, text or f"Read {uri}.", schema, run, True)


def _any_resource(read: Read, name: str, description: str | None) -> Tool:
    schema = {
        "type": "object",
        "properties": {"uri": {"type": "string", "description": "The resource's URI"}},
    }

    async def run(request_context_: Context, uri: str | None = None) -> Any:
        if uri is not None:
            result = await _answered(read, request_context_, "resources/read", {"uri": uri})
            return _contents_as_content(result) if isinstance(result, dict) else result
        fixed = await _listing(read, request_context_, "resources/list", "resources")
        templates = await _listing(
            read, request_context_, "resources/templates/list", "resourceTemplates"
        )
        lines = [_line(item.get("uri"), item) for item in fixed]
        lines += [_line(item.get("uriTemplate"), item) for item in templates]
        return "\n".join(lines) or "This server has no resources."

    return _tool(
        name,
        description or "Read one of this server's resources by its URI; without a URI, list them.",
        schema,
        run,
        True,
    )


def _line(key: Any, item: Mapping[str, Any]) -> str:
    said = item.get("description") or item.get("title") or item.get("name") or ""
    return f"{key}: {said}" if said else str(key)


def prompt_tool(
    read: Read,
    prompt: str | None,
    found: Prompt | None,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Tool:
    """The tool that gets ``prompt`` (its arguments the tool's), or, with no prompt, any
    prompt by its name and, without one, lists them. ``found``: the prompt registered
    under that name, when it is."""
    if prompt is None:
        return _any_prompt(read, name or "get_prompt", description)
    properties: dict[str, Any] = {}
    required: list[str] = []
    if found is not None:
        for argument in found.definition.get("arguments") or ():
            shown = {"type": "string"}
            if argument.get("description"):
                shown["description"] = argument["description"]
            properties[argument["name"]] = shown
            if argument.get("required"):
                required.append(argument["name"])
        schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    else:  # a backend's prompt: its arguments as the caller gives them
        schema = {"type": "object", "additionalProperties": {"type": "string"}}
    text = description or (found.definition.get("description") if found is not None else None)

    async def run(request_context_: Context, **given: Any) -> Any:
        params = {"name": prompt, "arguments": {k: str(v) for k, v in given.items()}}
        result = await _answered(read, request_context_, "prompts/get", params)
        return _messages_as_content(result) if isinstance(result, dict) else result

    return _tool(
        name or tool_name("prompt_", prompt), text or f"The {prompt} prompt.", schema, run, True
    )


def _any_prompt(read: Read, name: str, description: str | None) -> Tool:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The prompt's name"},
            "arguments": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Its arguments, by name",
            },
        },
    }

    async def run(
        request_context_: Context,
        name: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> Any:
        if name is not None:
            params = {"name": name, "arguments": {k: str(v) for k, v in (arguments or {}).items()}}
            result = await _answered(read, request_context_, "prompts/get", params)
            return _messages_as_content(result) if isinstance(result, dict) else result
        listed = await _listing(read, request_context_, "prompts/list", "prompts")
        return (
            json.dumps(
                [
                    {
                        "name": item.get("name"),
                        "description": item.get("description"),
                        "arguments": [a.get("name") for a in item.get("arguments") or ()],
                    }
                    for item in listed
                ],
                ensure_ascii=False,
            )
            if listed
            else "This server has no prompts."
        )

    return _tool(
        name,
        description or "Get one of this server's prompts by its name; without a name, list them.",
        schema,
        run,
        True,
    )
