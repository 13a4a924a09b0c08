"""Each revision's shape of tool definitions and tool results: one encoder per shape.

A handler returns values (text, models, media, a ``ToolError``); which wire shape they
take is the request's revision's, chosen here once per request by what the revision's
models define, never by branches in the handlers:

- ``CONTENT`` (the revisions before SEP-3279): a ``Tool`` with an optional
  ``outputSchema``, a ``CallToolResult`` of ``content`` and, for a tool with an output schema,
  ``structuredContent`` (``snodo.server.tools.finished``).
- ``VARIANTS`` (SEP-3279's, pinned as a draft revision): a ``Tool`` with ``outputVariants``,
  a ``tools/call`` that may name ``requestedOutputs``, a ``CallToolResult`` of
  ``outputs``, one per requested selector, each tagged with its audience and format.

The variants are derived from what the tool declares: ``assistant/content`` always,
and ``assistant/structured``, with the tool's output schema, when it has one (the SEP
maps the legacy ``outputSchema`` to that variant, and no other). Both encoders build
from the same value: the variants one projects what ``finished`` makes, so the content
and structured payloads are those a client of the content shape reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from snodo.core.errors import InternalError, InvalidParams
from snodo.revisions import Revision
from snodo.server.outputs import WRAPPED
from snodo.server.tools import Tool, finished

__all__ = [
    "ASSISTANT_CONTENT",
    "ASSISTANT_STRUCTURED",
    "CONTENT",
    "VARIANTS",
    "ContentEncoder",
    "Selector",
    "ToolEncoder",
    "VariantsEncoder",
    "encoder_of",
    "output_variants",
]

Selector = tuple[str, str]
"""An output's (audience, format)."""

ASSISTANT_CONTENT: Final[Selector] = ("assistant", "content")
"""The variant every tool declares, and the one answered when none is asked for."""
ASSISTANT_STRUCTURED: Final[Selector] = ("assistant", "structured")


class ToolEncoder(Protocol):
    """How one revision lists tools and answers their calls."""

    def listed(self, definitions: list[Any]) -> list[Any]:
        """The tool definitions as the revision lists them."""
        ...

    def selection(self, tool: Tool, params: Mapping[str, Any]) -> tuple[Selector, ...]:
        """What the call asks to be answered with, checked before the tool runs
        (``InvalidParams`` for what the tool does not declare)."""
        ...

    def finish(
        self,
        tool: Tool,
        value: Any,
        revision: Revision | None = None,
        selection: tuple[Selector, ...] = (),
    ) -> dict[str, Any]:
        """The CallToolResult (without resultType) of the tool's value."""
        ...


class ContentEncoder:
    """The revisions before SEP-3279: ``content`` and ``structuredContent``."""

    def listed(self, definitions: list[Any]) -> list[Any]:
        return definitions

    def selection(self, tool: Tool, params: Mapping[str, Any]) -> tuple[Selector, ...]:
        return ()

    def finish(
        self,
        tool: Tool,
        value: Any,
        revision: Revision | None = None,
        selection: tuple[Selector, ...] = (),
    ) -> dict[str, Any]:
        if type(value) is str and tool.output is None:  # the commonest answer
            return {"content": [{"type": "text", "text": value}]}
        return finished(tool, value, revision)


def _unwrapped(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema of the value an output schema wraps as ``{"result": value}``."""
    inner = dict(schema["properties"]["result"])
    if "$defs" in schema:
        inner["$defs"] = schema["$defs"]
    return inner


def output_variants(definition: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``outputVariants`` of a tool, from its definition (the one with ``outputSchema``)."""
    variants: list[dict[str, Any]] = [{"audience": "assistant", "format": "content"}]
    schema = definition.get("outputSchema")
    if isinstance(schema, Mapping):
        declared = _unwrapped(schema) if schema.get(WRAPPED) else dict(schema)
        variants.append({"audience": "assistant", "format": "structured", "schema": declared})
    return variants


def _declared(tool: Tool) -> tuple[Selector, ...]:
    return (
        (ASSISTANT_CONTENT, ASSISTANT_STRUCTURED)
        if tool.output is not None
        else (ASSISTANT_CONTENT,)
    )


def _named(selectors: Sequence[Selector]) -> str:
    return ", ".join(f"{audience}/{format_}" for audience, format_ in selectors)


class VariantsEncoder:
    """SEP-3279: ``outputVariants`` listed, ``requestedOutputs`` honoured, ``outputs``
    answered."""

    def listed(self, definitions: list[Any]) -> list[Any]:
        shown = []
        for definition in definitions:
            item = {key: value for key, value in definition.items() if key != "outputSchema"}
            item["outputVariants"] = output_variants(definition)
            shown.append(item)
        return shown

    def selection(self, tool: Tool, params: Mapping[str, Any]) -> tuple[Selector, ...]:
        """The requested selectors in the order asked, or ``assistant/content`` alone
        when none are; a selector the tool does not declare, one asked twice, or an
        empty list is invalid params (never silently replaced)."""
        requested = params.get("requestedOutputs")
        if requested is None:
            return (ASSISTANT_CONTENT,)
        selectors = tuple((item["audience"], item["format"]) for item in requested)
        if not selectors:
            raise InvalidParams("requestedOutputs names no output")
        declared = _declared(tool)
        undeclared = [selector for selector in selectors if selector not in declared]
        if undeclared:
            raise InvalidParams(
                f"Tool {tool.name} declares no output {_named(undeclared)} "
                f"(it declares {_named(declared)})"
            )
        if len(set(selectors)) != len(selectors):
            twice = sorted({s for s in selectors if selectors.count(s) > 1})
            raise InvalidParams(f"requestedOutputs names {_named(twice)} more than once")
        return selectors

    def finish(
        self,
        tool: Tool,
        value: Any,
        revision: Revision | None = None,
        selection: tuple[Selector, ...] = (ASSISTANT_CONTENT,),
    ) -> dict[str, Any]:
        """One output per selector, from what ``finished`` makes of the value. A failed
        call answers the outputs it has a payload for (its message as content, its
        structured error where it gave one); with none of them, a protocol error."""
        made = CONTENT.finish(tool, value, revision)
        failed = made.get("isError") is True
        outputs: list[dict[str, Any]] = []
        for audience, format_ in selection:
            if format_ == "content":
                outputs.append(
                    {"audience": audience, "format": format_, "content": made["content"]}
                )
            elif "structuredContent" in made:
                structured = made["structuredContent"]
                if tool.wrapped and not failed and isinstance(structured, Mapping):
                    structured = structured.get("result")
                outputs.append(
                    {"audience": audience, "format": format_, "structuredContent": structured}
                )
            elif not failed:  # a whole CallToolResult of the handler's, without it
                raise InternalError(f"Tool {tool.name} gave no structured output")
        if not outputs:
            text = " ".join(b.get("text", "") for b in made["content"] if b.get("type") == "text")
            raise InternalError(f"Tool {tool.name} failed: {text}".rstrip(": "))
        result: dict[str, Any] = {"outputs": outputs}
        if failed:
            result["isError"] = True
        if "_meta" in made:
            result["_meta"] = made["_meta"]
        return result


CONTENT: Final = ContentEncoder()
VARIANTS: Final = VariantsEncoder()

_ENCODERS: dict[str, ToolEncoder] = {}


def encoder_of(revision: Revision | None) -> ToolEncoder:
    """The encoder of a request's revision (None: the authoring one's): the variants
    one for a revision whose ``CallToolResult`` has ``outputs``."""
    if revision is None:
        return CONTENT
    found = _ENCODERS.get(revision.version)
    if found is None:
        fields = revision.models.CallToolResult.model_fields.items()
        variants = any((field.alias or name) == "outputs" for name, field in fields)
        found = _ENCODERS[revision.version] = VARIANTS if variants else CONTENT
    return found
