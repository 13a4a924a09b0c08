"""A backend's tools in the front request's revision, whichever the backend speaks.

A gateway's front may speak a revision whose tools take another shape than the
backend's: SEP-3279's draft (``outputVariants``, ``requestedOutputs``, ``outputs``) in
front of a server of an earlier revision, modern or legacy (``outputSchema``,
``content``, ``structuredContent``), or the reverse. Both sides' tool encoders
(``snodo.server.tool_encoders``) translate, through the content shape:

- a listing: the backend's definitions ``authored`` by its encoder, then ``listed`` by
  the front's (``outputSchema`` <-> the ``assistant/structured`` variant, a
  ``{"result": value}`` wrapper marked as snodo marks its own);
- a call: the front's ``requestedOutputs`` checked against what the tool declares
  before the backend is asked (``-32602`` as for a registered tool), never sent to a
  backend whose revision lacks them; a draft backend is asked for the outputs the
  content shape carries (``assistant/content``, and ``assistant/structured`` when the
  tool declares it);
- a result: ``decoded`` by the backend's encoder, ``encoded`` by the front's, so a
  front of the draft never gets ``content`` or ``structuredContent``, nor a front of
  an older revision ``outputs``.

What the tool declares is read from the backend's own listing, kept by name (the
backend's names, before a ``Shape`` renames them) until its tools list changes, and
read again, once per change, for a call of a tool not in it. A tool the backend does
not list to the gateway is taken to declare what the content shape can carry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from snodo.server.tool_encoders import (
    ASSISTANT_CONTENT,
    ASSISTANT_STRUCTURED,
    VARIANTS,
    Selector,
    ToolEncoder,
    declared_of,
    is_wrapped,
)

__all__ = ["ToolTranslation"]

_REQUESTED: Final = "requestedOutputs"
_READ: Final = ("content", "structuredContent")
"""What snodo's client adds to a draft result it reads (``snodo.client.tool_outputs``):
its reading, not the backend's answer."""


class ToolTranslation:
    """The backend's tool definitions as it last listed them (its own shape), and
    each listing, call and result between its encoder and a front request's."""

    def __init__(self) -> None:
        self.definitions: dict[str, dict[str, Any]] = {}
        self.read_whole = False
        """The backend's whole list was read for a call since its tools last changed: a
        name still unknown is not read for again (one list per change, whatever the
        front asks)."""

    def forget(self) -> None:
        """The backend's tools list changed: what they declare is read again."""
        self.definitions.clear()
        self.read_whole = False

    def remember(self, items: list[Any]) -> None:
        """A backend listing's definitions, by name."""
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                self.definitions[item["name"]] = item

    def listed(self, front: ToolEncoder, backend: ToolEncoder, items: list[Any]) -> list[Any]:
        """A backend listing's items as the front's revision lists them (kept, when
        they are translated, for the calls translated after)."""
        if front is backend:
            return items
        self.remember(items)
        return front.listed(backend.authored(items))

    def request(
        self,
        front: ToolEncoder,
        backend: ToolEncoder,
        params: Mapping[str, Any],
        definition: Mapping[str, Any] | None,
    ) -> tuple[Mapping[str, Any], tuple[Selector, ...]]:
        """The params to send the backend, and the front's selection (checked now:
        ``InvalidParams`` for an output the tool does not declare)."""
        if front is backend:
            return params, ()
        sent = {key: value for key, value in params.items() if key != _REQUESTED}
        name = str(params.get("name"))
        if definition is None:  # not listed to this gateway: what the content shape has
            declared: tuple[Selector, ...] = (ASSISTANT_CONTENT, ASSISTANT_STRUCTURED)
        else:
            declared = declared_of(backend.authored([definition])[0])
        selection = front.selected(name, declared, params)
        if backend is VARIANTS:  # the outputs the content shape carries
            asked = [ASSISTANT_CONTENT]
            if definition is not None and ASSISTANT_STRUCTURED in declared_of(definition):
                asked.append(ASSISTANT_STRUCTURED)
            sent[_REQUESTED] = [{"audience": a, "format": f} for a, f in asked]
        return sent, selection

    def result(
        self,
        front: ToolEncoder,
        backend: ToolEncoder,
        params: Mapping[str, Any],
        definition: Mapping[str, Any] | None,
        selection: tuple[Selector, ...],
        result: dict[str, Any],
    ) -> dict[str, Any]:
        """The backend's complete result of a ``tools/call`` as the front's revision
        answers it."""
        if backend is VARIANTS and isinstance(result.get("outputs"), list):
            result = {key: value for key, value in result.items() if key not in _READ}
        if front is backend:
            return result
        made = backend.decoded(result, definition or {})
        authored = {} if definition is None else backend.authored([definition])[0]
        return front.encoded(str(params.get("name")), made, selection, is_wrapped(authored))
