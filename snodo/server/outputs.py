"""A tool's ``outputSchema`` from its return annotation, decided once at registration.

- A pydantic model, a dataclass or a TypedDict is an object: its schema is the output
  schema as it is, and ``structuredContent`` is the value dumped.
- Any other type JSON Schema can describe (``int``, ``float``, ``bool``, lists, dicts,
  unions, ``T | None``, ``Literal``, enums, dates) is wrapped: the output schema is an
  object with one required property ``result`` of that type, marked
  ``"x-snodo-wrapped": true``, and ``structuredContent`` is ``{"result": value}``. Both
  revisions are served by one definition: the legacy one requires an object at the root.
- ``str`` (alone or ``| None``) is text, ``None`` is nothing, and content (a content
  block, a ``CallToolResult``, the media helpers, a list of them, or a dict whose values
  may be strings, ``dict[str, str]``, the way content blocks are often returned, and a
  list of such) is content: none has
  an output schema. Nor does a type with ``Any`` or ``object`` anywhere in it, or a bare
  ``dict`` or ``list``: they say nothing a schema could check, and a content block is
  often returned as ``dict[str, Any]``.
- A type pydantic cannot describe is refused (``TypeError`` with pydantic's reason):
  pass ``output_schema=`` or ``structured_output=False``. (On Python 3.11 pydantic
  takes ``typing_extensions.TypedDict``, not ``typing.TypedDict``.)

``InputRequired``, ``ToolError`` and a ``Handoff`` (``snodo.server.handoff``: the tasks
extension's background work, say) in a union are the other ways a tool may end, not
its output, so they are left out before deciding.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Awaitable, Coroutine, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, PydanticSchemaGenerationError, PydanticUserError
from typing_extensions import is_typeddict

from snodo.server.type_schemas import schema_of

__all__ = ["WRAPPED", "Output", "output_of"]

WRAPPED = "x-snodo-wrapped"
"""The output schema's mark that ``structuredContent`` is ``{"result": value}``."""

_CONTENT_MODELS = frozenset(
    {
        "TextContent",
        "ImageContent",
        "AudioContent",
        "EmbeddedResource",
        "ResourceLink",
        "CallToolResult",
        "ContentBlock",
    }
)


@dataclass(frozen=True, slots=True)
class Output:
    """An inferred output schema, and whether it wraps the value as ``{"result": ...}``."""

    schema: dict[str, Any]
    wrapped: bool


def output_of(annotation: Any, ending: tuple[type, ...] = ()) -> Output | None:
    """The output schema a return annotation gives, or None; ``ending`` are the types
    a tool returns to end otherwise (asking, failing, going to the background)."""
    if typing.get_origin(annotation) in (Awaitable, Coroutine):  # a sync def handing one back
        annotation = typing.get_args(annotation)[-1] if typing.get_args(annotation) else Any
    kept = _without(annotation, ending)
    if kept is None or _textual(kept) or _says_nothing(kept) or _content(kept):
        return None
    if _may_be_blocks(kept):
        return None
    try:
        schema = schema_of(kept)
    except (PydanticSchemaGenerationError, PydanticUserError) as exc:
        reason = str(exc).split("\n", 1)[0]
        raise TypeError(f"no JSON Schema for the return type: {reason}") from exc
    if _object_like(kept):
        return Output(schema, wrapped=False)
    defs = schema.pop("$defs", None)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        WRAPPED: True,
    }
    if defs:
        wrapper["$defs"] = defs
    return Output(wrapper, wrapped=True)


def _members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _without(annotation: Any, ending: tuple[type, ...]) -> Any:
    """``annotation`` less the ending types; None when nothing else is left."""
    if annotation is None or annotation is type(None):
        return None
    members = [
        m for m in _members(annotation) if not (isinstance(m, type) and issubclass(m, ending))
    ]
    if not members or members == [type(None)]:
        return None
    if len(members) == len(_members(annotation)):
        return annotation
    return members[0] if len(members) == 1 else typing.Union[tuple(members)]  # noqa: UP007


def _textual(annotation: Any) -> bool:
    return all(m is str or m is type(None) for m in _members(annotation))


def _says_nothing(annotation: Any) -> bool:
    """``Any`` or ``object`` anywhere in it, or a bare ``dict`` or ``list``: a content
    block is often returned as ``dict[str, Any]``, and such a schema checks nothing."""
    if annotation is Any or annotation is object or annotation in (dict, list):
        return True
    return any(_says_nothing(arg) for m in _members(annotation) for arg in typing.get_args(m))


def _may_be_blocks(annotation: Any) -> bool:
    """A dict whose values may be strings, or a list of such dicts: what a tool returning
    content blocks as plain dicts is annotated with (``-> dict[str, str]``)."""
    for member in _members(annotation):
        origin = typing.get_origin(member)
        args = typing.get_args(member)
        mapping = origin in (dict, Mapping, MutableMapping) and len(args) == 2
        if mapping and any(value is str for value in _members(args[1])):
            return True
        if origin in (list, tuple, Sequence) and args and _may_be_blocks(args[0]):
            return True
    return False


def _content(annotation: Any) -> bool:
    """Content blocks and results, alone, in a union or in a list."""
    for member in _members(annotation):
        if typing.get_origin(member) in (list, tuple) or member in (list, tuple):
            args = typing.get_args(member)
            if args and all(_content(arg) for arg in args if arg is not Ellipsis):
                return True
            continue
        if isinstance(member, type) and (
            member.__name__ in _CONTENT_MODELS or getattr(member, "__snodo_content__", False)
        ):
            return True
    return False


def _object_like(annotation: Any) -> bool:
    return isinstance(annotation, type) and (
        issubclass(annotation, BaseModel)
        or dataclasses.is_dataclass(annotation)
        or is_typeddict(annotation)
    )
