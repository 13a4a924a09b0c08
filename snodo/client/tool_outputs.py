"""Tool outputs asked for and read back, in whichever shape the revision gives them.

A revision whose ``tools/call`` takes ``requestedOutputs`` (SEP-3279's draft) answers
``outputs``, one per requested selector, each tagged with its audience and format. The
caller asks with ``call_tool(..., outputs=[...])`` whatever the server speaks: a
revision without the field is sent none (the SEP forbids it there), and its answer is
the content shape already. An ``outputs`` answer is read into the result object the
client returns for every revision: ``content`` from the content output (the
``assistant`` one first), ``structuredContent`` from the structured one (likewise),
and ``outputs`` kept as it came, for a caller that routes each by its audience.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from snodo.revisions import Revision

__all__ = ["OutputSelector", "asked", "read_outputs", "selectors", "speaks_variants"]

OutputSelector = tuple[str, str] | Mapping[str, str]
"""An output asked for: ``("assistant", "structured")`` or ``{"audience": ...,
"format": ...}``."""

_FIELD = "requestedOutputs"
_SPEAKS: dict[str, bool] = {}


def speaks_variants(revision: Revision | None) -> bool:
    """Whether ``revision``'s ``tools/call`` takes ``requestedOutputs``."""
    if revision is None:
        return False
    found = _SPEAKS.get(revision.version)
    if found is None:
        spec = revision.methods.get("tools/call")
        fields = getattr(getattr(spec, "params", None), "model_fields", {})
        found = _SPEAKS[revision.version] = any(
            (field.alias or name) == _FIELD for name, field in fields.items()
        )
    return found


def selectors(outputs: Iterable[OutputSelector]) -> list[dict[str, str]]:
    """The ``requestedOutputs`` of what a caller asked for; ValueError for a selector
    that is neither an (audience, format) pair nor an object of the two."""
    given = []
    for output in outputs:
        if isinstance(output, Mapping):
            audience, format_ = output.get("audience"), output.get("format")
        elif isinstance(output, tuple) and len(output) == 2:
            audience, format_ = output
        else:
            audience = format_ = None
        if not isinstance(audience, str) or not isinstance(format_, str):
            raise ValueError(f"outputs: {output!r} is not an (audience, format) pair")
        given.append({"audience": audience, "format": format_})
    return given


def asked(revision: Revision | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as the revision takes them: without ``requestedOutputs`` where its
    ``tools/call`` does not define it."""
    if method != "tools/call" or _FIELD not in params or speaks_variants(revision):
        return params
    return {key: value for key, value in params.items() if key != _FIELD}


def _first(outputs: list[Mapping[str, Any]], format_: str) -> Mapping[str, Any] | None:
    matching = [output for output in outputs if output.get("format") == format_]
    for output in matching:
        if output.get("audience") == "assistant":
            return output
    return matching[0] if matching else None


def read_outputs(revision: Revision | None, method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A complete ``tools/call`` result of a variants revision with ``content`` and
    ``structuredContent`` read from its outputs; any other result as it is."""
    outputs = result.get("outputs")
    if method != "tools/call" or not isinstance(outputs, list) or not speaks_variants(revision):
        return result
    if result.get("resultType", "complete") != "complete":
        return result
    read = dict(result)
    content = _first(outputs, "content")
    read["content"] = list(content["content"]) if content is not None else []
    structured = _first(outputs, "structured")
    if structured is not None:
        read["structuredContent"] = structured["structuredContent"]
    return read
