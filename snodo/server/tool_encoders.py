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

Tools that are not registered ones go through the same encoders, known by their
definitions: tool search's own (``selected`` and ``encoded`` a result made in the
content shape), and a backend's behind a gateway, whose definitions and results each
encoder also turns back into the content shape (``authored``, ``decoded``), the common
ground between two revisions (``snodo.gateway.tool_translation``).
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
    "declared_of",
    "encoder_of",
    "is_wrapped",
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

    def selected(
        self, name: str, declared: tuple[Selector, ...], params: Mapping[str, Any]
    ) -> tuple[Selector, ...]:
        """``selection`` for a tool known by its name and the outputs it declares (a
        tool that is not a registered one: tool search's own, a backend's)."""
        ...

    def encoded(
        self,
        name: str,
        made: dict[str, Any],
        selection: tuple[Selector, ...],
        wrapped: bool = False,
    ) -> dict[str, Any]:
        """A result of the content shape (``content``, ``structuredContent``) as this
        revision answers it; ``wrapped``: its structured content is ``{"result": value}``."""
        ...

    def authored(self, definitions: list[Any]) -> list[Any]:
        """This revision's tool definitions in the content shape: ``listed`` undone."""
        ...

    def decoded(self, result: dict[str, Any], definition: Mapping[str, Any]) -> dict[str, Any]:
        """This revision's result of the tool ``definition`` (this revision's) in the
        content shape: ``encoded`` undone."""
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

    def selected(
        self, name: str, declared: tuple[Selector, ...], params: Mapping[str, Any]
    ) -> tuple[Selector, ...]:
        return ()

    def encoded(
        self,
        name: str,
        made: dict[str, Any],
        selection: tuple[Selector, ...],
        wrapped: bool = False,
    ) -> dict[str, Any]:
        return made

    def authored(self, definitions: list[Any]) -> list[Any]:
        return definitions

    def decoded(self, result: dict[str, Any], definition: Mapping[str, Any]) -> dict[str, Any]:
        return result


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


def declared_of(definition: Mapping[str, Any]) -> tuple[Selector, ...]:
    """The outputs a tool declares, from its definition in either shape: its
    ``outputVariants``, or what its ``outputSchema`` (or none) stands for."""
    variants = definition.get("outputVariants")
    if isinstance(variants, list):
        return tuple(
            (variant["audience"], variant["format"])
            for variant in variants
            if isinstance(variant, Mapping)
            and isinstance(variant.get("audience"), str)
            and isinstance(variant.get("format"), str)
        )
    if isinstance(definition.get("outputSchema"), Mapping):
        return (ASSISTANT_CONTENT, ASSISTANT_STRUCTURED)
    return (ASSISTANT_CONTENT,)


def is_wrapped(definition: Mapping[str, Any]) -> bool:
    """Whether a content-shape definition's structured content is ``{"result": value}``."""
    schema = definition.get("outputSchema")
    return isinstance(schema, Mapping) and schema.get(WRAPPED) is True


def _variant(definition: Mapping[str, Any], selector: Selector) -> Mapping[str, Any] | None:
    variants = definition.get("outputVariants")
    for variant in variants if isinstance(variants, list) else ():
        if isinstance(variant, Mapping) and (variant.get("audience"), variant.get("format")) == (
            selector
        ):
            return variant
    return None


def _object_schema(schema: Mapping[str, Any]) -> bool:
    """Whether every value ``schema`` allows is a JSON object (the content shape's
    ``outputSchema`` must say so at its root)."""
    return schema.get("type") == "object"


def _wrapper(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The content shape's output schema of a structured variant that may be any JSON
    value: ``{"result": value}``, marked, as snodo's own wrapped tools declare it."""
    inner = {key: value for key, value in schema.items() if key != "$defs"}
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
        WRAPPED: True,
    }
    if "$defs" in schema:
        wrapper["$defs"] = schema["$defs"]
    return wrapper


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
        return self.selected(tool.name, _declared(tool), params)

    def selected(
        self, name: str, declared: tuple[Selector, ...], params: Mapping[str, Any]
    ) -> tuple[Selector, ...]:
        requested = params.get("requestedOutputs")
        if requested is None:
            return (ASSISTANT_CONTENT,)
        selectors = tuple((item["audience"], item["format"]) for item in requested)
        if not selectors:
            raise InvalidParams("requestedOutputs names no output")
        undeclared = [selector for selector in selectors if selector not in declared]
        if undeclared:
            raise InvalidParams(
                f"Tool {name} declares no output {_named(undeclared)} "
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
        return self.encoded(tool.name, made, selection, tool.wrapped)

    def encoded(
        self,
        name: str,
        made: dict[str, Any],
        selection: tuple[Selector, ...],
        wrapped: bool = False,
    ) -> dict[str, Any]:
        failed = made.get("isError") is True
        outputs: list[dict[str, Any]] = []
        for audience, format_ in selection:
            if format_ == "content":
                outputs.append(
                    {"audience": audience, "format": format_, "content": made["content"]}
                )
            elif "structuredContent" in made:
                structured = made["structuredContent"]
                if wrapped and not failed and isinstance(structured, Mapping):
                    structured = structured.get("result")
                outputs.append(
                    {"audience": audience, "format": format_, "structuredContent": structured}
                )
            elif not failed:  # a whole CallToolResult of the handler's, without it
                raise InternalError(f"Tool {name} gave no structured output")
        if not outputs:
            blocks = made.get("content") or []
            text = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            raise InternalError(f"Tool {name} failed: {text}".rstrip(": "))
        result: dict[str, Any] = {"outputs": outputs}
        if failed:
            result["isError"] = True
        if "_meta" in made:
            result["_meta"] = made["_meta"]
        return result

    def authored(self, definitions: list[Any]) -> list[Any]:
        """``outputSchema`` from the ``assistant/structured`` variant (the one the SEP
        maps it to), wrapped as ``{"result": value}`` when that variant's value need
        not be an object; the other variants have no place in the content shape."""
        shown = []
        for definition in definitions:
            if not isinstance(definition, Mapping):
                shown.append(definition)
                continue
            item = {key: value for key, value in definition.items() if key != "outputVariants"}
            variant = _variant(definition, ASSISTANT_STRUCTURED)
            schema = None if variant is None else variant.get("schema")
            if isinstance(schema, Mapping):
                item["outputSchema"] = dict(schema) if _object_schema(schema) else _wrapper(schema)
            shown.append(item)
        return shown

    def decoded(self, result: dict[str, Any], definition: Mapping[str, Any]) -> dict[str, Any]:
        """``content`` from the ``assistant/content`` output, ``structuredContent`` from
        the ``assistant/structured`` one (``{"result": value}`` where ``authored``
        wraps its schema), ``outputs`` left behind."""
        outputs = result.get("outputs")
        if not isinstance(outputs, list):
            return result
        shown = {
            key: value
            for key, value in result.items()
            if key not in ("outputs", "content", "structuredContent")
        }
        shown["content"] = []
        for output in outputs:
            if not isinstance(output, Mapping) or output.get("audience") != "assistant":
                continue
            if output.get("format") == "content" and isinstance(output.get("content"), list):
                shown["content"] = list(output["content"])
            elif output.get("format") == "structured" and "structuredContent" in output:
                structured = output["structuredContent"]
                schema = (_variant(definition, ASSISTANT_STRUCTURED) or {}).get("schema")
                failed = result.get("isError") is True  # an error's own, never wrapped
                if isinstance(schema, Mapping) and not _object_schema(schema) and not failed:
                    structured = {"result": structured}
                shown["structuredContent"] = structured
        return shown


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
