"""Tools: definitions derived from Python functions, and calls turned into results.

The input schema comes from the function's type hints (through pydantic) unless one
is given; either way arguments are checked against it by a JSON Schema validator
before the function runs. A failed check, like any error the tool itself raises, is a
tool result with ``isError: true`` (server/tools.mdx: tool execution errors are
reported in the result, so the model can see them and correct itself). A typed
``McpError`` keeps its JSON-RPC meaning instead.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    PydanticUndefinedAnnotation,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
    create_model,
)
from pydantic_core import to_jsonable_python

from snodo.core.errors import InternalError
from snodo.core.http_headers import header_params
from snodo.core.result import InputRequired, ToolError
from snodo.revisions import Revision
from snodo.revisions.authoring import adapters
from snodo.server.handoff import Handoff
from snodo.server.invoke import Invoker, TimedOut, UserFunction, described, invoker, listed_fields
from snodo.server.media import Media
from snodo.server.options import TaskSupport, ToolOptions
from snodo.server.outputs import Output, output_of
from snodo.server.schemas import CompiledSchema, compile_schema
from snodo.server.threads import Threads
from snodo.server.type_schemas import UntitledSchema

__all__ = [
    "TaskSupport",
    "Tool",
    "ToolDefinitionError",
    "finished",
    "make_tool",
    "plain_bind",
    "tool_result",
]

log = logging.getLogger("snodo")


_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
"""server/tools.mdx, "Tool Names"."""

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


class ToolDefinitionError(ValueError):
    """A tool that cannot be registered as written; the message names the tool (and the
    parameter, when one is at fault) on one line."""


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    definition: dict[str, Any]
    """The Tool object exactly as tools/list shows it."""
    invoker: Invoker
    arguments: CompiledSchema
    output: CompiledSchema | None
    model: type[BaseModel] | None
    """Converts checked arguments to the Python types the hints ask for."""
    headers: tuple[tuple[tuple[str, ...], str], ...] = ()
    """(argument path, header name) of each ``x-mcp-header`` argument."""
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs, checked before the handler runs (none: open)."""
    task: TaskSupport | None = None
    """Whether the tool may (``optional``) or must (``required``) run as a task."""
    plain: tuple[tuple[str, type, Any], ...] | None = None
    """(name, type, default) of each parameter when all are str, int, float or bool
    with a scalar default: arguments of exactly those types need no conversion."""
    wrapped: bool = False
    """The output schema wraps the return type: ``structuredContent`` is
    ``{"result": value}`` (``snodo.server.outputs``)."""

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if self.model is None:
            return dict(arguments)
        if self.plain is not None:
            bound = plain_bind(self.plain, arguments)
            if bound is not None:
                return bound
        values = self.model.model_validate(arguments)
        return {name: getattr(values, name) for name in type(values).model_fields}


_PLAIN_TYPES = (str, int, float, bool)
_REQUIRED = inspect.Parameter.empty


def _plain_parameters(run: Invoker) -> tuple[tuple[str, type, Any], ...] | None:
    plain = []
    for param in run.parameters:
        default = param.default
        if param.annotation not in _PLAIN_TYPES or not (
            default is _REQUIRED or default is None or type(default) in _PLAIN_TYPES
        ):
            return None
        plain.append((param.name, param.annotation, default))
    return tuple(plain)


def plain_bind(
    plain: tuple[tuple[str, type, Any], ...], arguments: Mapping[str, Any]
) -> dict[str, Any] | None:
    """What the arguments model returns, when every argument already has its exact type
    (pydantic hands such values back unchanged); None sends anything else to the model,
    unknown or missing arguments included, so its conversions and errors stay its own."""
    bound: dict[str, Any] = {}
    given = 0
    for name, kind, default in plain:
        if name in arguments:
            value = arguments[name]
            if type(value) is not kind:
                return None
            given += 1
        elif default is _REQUIRED:
            return None
        else:
            value = default
        bound[name] = value
    return bound if given == len(arguments) else None


def _arguments_model(name: str, run: Invoker) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for param in run.parameters:
        annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    model: type[BaseModel] = create_model(
        f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        module = annotation.__module__
        return (
            annotation.__qualname__
            if module == "builtins"
            else f"{module}.{annotation.__qualname__}"
        )
    return repr(annotation)


def _unschematic(tool_name: str, run: Invoker, error: Exception) -> ToolDefinitionError:
    """Name the parameter whose type has no JSON Schema, instead of pydantic's page of text."""
    for param in run.parameters:
        if param.annotation is inspect.Parameter.empty:
            continue
        try:
            TypeAdapter(param.annotation).json_schema()
        except (PydanticUserError, PydanticUndefinedAnnotation):
            return ToolDefinitionError(
                f"tool {tool_name}: parameter {param.name!r} has type "
                f"{_type_name(param.annotation)}, which cannot be turned into a JSON Schema; "
                "annotate it with a JSON type (or a pydantic model), or pass input_schema="
            )
    reason = str(error).split("\n", 1)[0]
    return ToolDefinitionError(f"tool {tool_name}: no JSON Schema for its parameters: {reason}")


_ENDINGS: tuple[type, ...] = (InputRequired, ToolError, Handoff)
"""What a tool returns to end other than with its output (a ``Handoff`` for an
extension to take)."""


def _inferred_output(function: UserFunction) -> Output | None:
    """The output schema the function's return annotation gives, or None."""
    try:
        annotation = typing.get_type_hints(function).get("return")
    except (NameError, TypeError):
        return None
    return output_of(annotation, _ENDINGS) if annotation is not None else None


def make_tool(
    function: UserFunction, options: ToolOptions | None = None, *, threads: Threads | None = None
) -> Tool:
    """A tool from an author's function and its options (``ToolOptions``)."""
    options = options or {}
    name, task = options.get("name"), options.get("task")
    inline, timeout = options.get("inline", False), options.get("timeout")
    input_schema, output_schema = options.get("input_schema"), options.get("output_schema")
    structured_output = options.get("structured_output", True)
    tool_name = name or function.__name__
    if not isinstance(tool_name, str) or not _TOOL_NAME.fullmatch(tool_name):
        raise ToolDefinitionError(
            f"tool {tool_name!r}: a tool name is 1 to 128 of A-Z, a-z, 0-9, '_', '-' and '.'"
            " (server/tools.mdx)"
        )
    if task not in (None, "optional", "required"):
        raise ToolDefinitionError(f"tool {tool_name}: task must be 'optional' or 'required'")
    run = invoker(function, inline=inline, timeout=timeout, threads=threads)
    model = None
    if input_schema is None:
        try:
            model = _arguments_model(tool_name, run)
            input_schema = model.model_json_schema(schema_generator=UntitledSchema)
        except (PydanticUserError, PydanticUndefinedAnnotation) as exc:
            raise _unschematic(tool_name, run, exc) from exc
    if input_schema.get("type") != "object":
        raise ToolDefinitionError(f"tool {tool_name}: inputSchema must have type 'object'")
    try:
        headers = tuple(header_params(input_schema))  # server/tools.mdx x-mcp-header rules
    except ValueError as exc:
        raise ToolDefinitionError(f"tool {tool_name}: {exc}") from exc
    wrapped = False
    if output_schema is None and structured_output:
        try:
            inferred = _inferred_output(function)
        except TypeError as exc:
            raise ToolDefinitionError(
                f"tool {tool_name}: {exc}; pass output_schema= or structured_output=False"
            ) from exc
        if inferred is not None:
            output_schema, wrapped = inferred.schema, inferred.wrapped
    definition = described(
        {"name": tool_name}, function, options.get("title"), options.get("description")
    )
    definition["inputSchema"] = dict(input_schema)
    if output_schema is not None:
        definition["outputSchema"] = dict(output_schema)
    definition.update(
        listed_fields(
            icons=options.get("icons"),
            annotations=options.get("annotations"),
            meta=options.get("meta"),
        )
    )
    return Tool(
        name=tool_name,
        definition=definition,
        invoker=run,
        arguments=compile_schema(input_schema),
        output=compile_schema(output_schema) if output_schema is not None else None,
        model=model,
        plain=None if model is None else _plain_parameters(run),
        headers=headers,
        scopes=frozenset(options.get("scopes", ())),
        task=task,
        wrapped=wrapped,
    )


def _jsonable(value: Any) -> Any:
    """The value as JSON data: models by their wire names, dataclasses, lists of them,
    and the other types pydantic serialises (dates, enums, UUIDs) as it does."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if type(value) in _PLAIN:
        return value
    return to_jsonable_python(value, by_alias=True)


_PLAIN = frozenset((str, int, float, bool, type(None)))


def _block(value: Any, revision: Revision | None = None) -> dict[str, Any] | None:
    """The value as a content block, if it is one: of ``revision``, the request's (None:
    the authoring one)."""
    if isinstance(value, Media):
        return value.block()
    if isinstance(value, BaseModel):
        value = _jsonable(value)
    if isinstance(value, dict) and value.get("type") in CONTENT_TYPES:
        if len(value) == 2 and value["type"] == "text" and type(value.get("text")) is str:
            return value  # the commonest block, as every revision defines it: nothing to check
        blocks = (
            adapters.content_block
            if revision is None or revision.authoring
            else revision.adapters.content_block
        )
        try:
            blocks.validate_python(value)
        except ValidationError:
            return None
        return value
    if isinstance(value, str):
        return {"type": "text", "text": value}
    return None


def _text_json(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": json.dumps(value, ensure_ascii=False)}


def finished(tool: Tool, value: Any, revision: Revision | None = None) -> dict[str, Any]:
    """The CallToolResult of a finished call, its structured output checked against the
    tool's output schema (a mismatch is the server's fault: -32603); its content blocks
    are ``revision``'s (the request's; None: the authoring revision's)."""
    result = tool_result(tool, value, revision)
    if tool.output is not None and not result.get("isError"):
        reason = tool.output.first_error(result.get("structuredContent"))
        if reason is not None:
            log.error(
                "tool %s returned structured content outside its output schema: %s",
                tool.name,
                reason,
            )
            raise InternalError("Tool result does not match its output schema")
    return result


def tool_result(tool: Tool, value: Any, revision: Revision | None = None) -> dict[str, Any]:
    """Turn what a tool function returned into a CallToolResult (without resultType),
    its content blocks as ``revision`` (None: the authoring one) defines them."""
    if type(value) is str and tool.output is None:  # the commonest answer, as _block makes it
        return {"content": [{"type": "text", "text": value}]}
    if isinstance(value, ToolError):
        error: dict[str, Any] = {
            "content": [{"type": "text", "text": value.message}],
            "isError": True,
        }
        if value.structured_content is not None:
            error["structuredContent"] = _jsonable(value.structured_content)
        return error
    if isinstance(value, BaseModel) and "content" in type(value).model_fields:
        result: dict[str, Any] = _jsonable(value)
        result.pop("resultType", None)
        return result
    if isinstance(value, Handoff):  # no extension offered here took it
        log.error(
            "tool %s returned %s, which no extension offered here takes",
            tool.name,
            type(value).__name__,
        )
        raise InternalError()
    if tool.output is not None:
        structured = _jsonable(value)
        text = _text_json(structured)  # for a client that reads content only
        if tool.wrapped:
            structured = {"result": structured}
        return {"content": [text], "structuredContent": structured}
    if value is None:
        return {"content": []}
    single = _block(value, revision)
    if single is not None:
        return {"content": [single]}
    if isinstance(value, (list, tuple)):
        blocks = [_block(item, revision) for item in value]
        if all(block is not None for block in blocks):
            return {"content": blocks}
    return {"content": [_text_json(_jsonable(value))]}


def masked(name: str) -> str:
    """What the client reads of a tool's untyped exception under ``mask_errors``."""
    return f"Tool {name} failed; the server's log has the details"


def failure(tool: Tool, exc: Exception, mask: bool) -> ToolError:
    """The tool error a tool's exception answers: its own when it raised one, a
    timeout's, or the exception's message (generic under ``mask``; the traceback logged)."""
    if isinstance(exc, ToolError):  # raised on purpose: the answer itself
        return exc
    if isinstance(exc, TimedOut):  # the model reads that it took too long, and may retry
        log.warning("tool %s did not finish within %g s", tool.name, exc.seconds)
        return ToolError(f"Tool {tool.name} did not finish within {exc.seconds:g} s")
    # The client sees only the message; the operator needs the traceback.
    log.warning("tool %s failed", tool.name, exc_info=exc)
    return ToolError(masked(tool.name) if mask else str(exc) or type(exc).__name__)
