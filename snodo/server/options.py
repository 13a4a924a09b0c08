"""What an author may say about each kind of item, declared once per kind.

``@server.tool(...)``, ``server.add_tool(...)`` and ``make_tool`` all take a tool's
options as these mappings describe them, and so for prompts, resources and templates:
an option added here is one every way of registering takes, and an editor completes it
from the one declaration. A misspelt option is a ``TypeError`` where it is written
(``check``), as it would be for a keyword the signature does not name.

Every kind takes ``ItemOptions``:

- ``name``: the item's name; the function's by default (a resource's and a template's
  too).
- ``title``: a display name for people.
- ``description``: for the model; the function's docstring by default.
- ``icons``: ``Icon`` objects for hosts to show.
- ``meta``: the item's ``_meta``.
- ``scopes``: OAuth scopes a caller's token must grant to use it.
- ``inline``: run a sync function on the event loop, not in a thread: only for one
  that never blocks.
- ``timeout``: seconds a call may take; past them the caller gets an error saying so,
  and the call is cancelled (async) or abandoned (thread).
- ``tags``: names ``server.enable``/``server.disable`` and ``ctx.enable``/``ctx.disable``
  select it by (``snodo.server.visibility``).
- ``enabled``: False: hidden until enabled.
- ``visible``: a function of the request's ``Context`` (its token's claims: roles,
  groups) that says whether the caller sees it; hidden, it answers as a missing item.
- ``fields``: fields of the item's definition a revision adds, by their wire names
  (``{"deprecated": True}``), sent only to the revisions that define them; one no
  served revision defines is refused (``snodo.server.revised``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypedDict

from snodo.core.caching import CacheHint
from snodo.core.context import Context

__all__ = [
    "ItemOptions",
    "PromptOptions",
    "ResourceOptions",
    "TaskSupport",
    "TemplateOptions",
    "ToolOptions",
    "check",
]

TaskSupport = Literal["optional", "required"]
"""Whether a tool may (``optional``) or must (``required``) run as a task."""


class ItemOptions(TypedDict, total=False):
    """The options of every kind of item (the module's docstring says each)."""

    name: str | None
    title: str | None
    description: str | None
    icons: list[Mapping[str, Any]] | None
    meta: Mapping[str, Any] | None
    scopes: Iterable[str]
    inline: bool
    timeout: float | None
    tags: Iterable[str]
    enabled: bool
    visible: Callable[[Context], bool] | None
    fields: Mapping[str, Any] | None


class ToolOptions(ItemOptions, total=False):
    """A tool's options, besides ``ItemOptions``.

    - ``input_schema``: the arguments' JSON Schema; built from the function's parameters
      and their type hints by default (``Context`` is left out).
    - ``output_schema``: the ``structuredContent`` JSON Schema; built from the return
      annotation by default (``snodo.server.outputs``: a model, dataclass or TypedDict as
      it is, other types wrapped as ``{"result": ...}``).
    - ``structured_output``: False: no output schema from the return annotation.
    - ``annotations``: ``ToolAnnotations`` hints (``readOnlyHint``, ...).
    - ``task``: ``"optional"`` or ``"required"``: it may, or must, run as a task.
    """

    input_schema: Mapping[str, Any] | None
    output_schema: Mapping[str, Any] | None
    structured_output: bool
    annotations: Mapping[str, Any] | None
    task: TaskSupport | None


class PromptOptions(ItemOptions, total=False):
    """A prompt's options, besides ``ItemOptions``.

    - ``arguments``: ``PromptArgument`` objects; by default one per parameter, required
      when it has no default.
    """

    arguments: list[Mapping[str, Any]] | None


class TemplateOptions(ItemOptions, total=False):
    """A resource template's options, besides ``ItemOptions``.

    - ``mime_type``: the ``mimeType`` of what it reads.
    - ``extra``: further ``ResourceTemplate`` fields as they go on the wire.
    - ``annotations``: ``Annotations`` (``audience``, ``priority``, ``lastModified``).
    - ``cache``: the ``ttlMs`` and ``cacheScope`` reads through it carry (else the
      server's ``Caching.read``).
    - ``allow_paths``: take values that decode to a path traversal, an absolute path, a
      backslash or a NUL byte; by default such a URI does not match (the read is
      "resource not found"). Only for a function that confines paths itself.
    """

    mime_type: str | None
    extra: Mapping[str, Any] | None
    annotations: Mapping[str, Any] | None
    cache: CacheHint | None
    allow_paths: bool


class ResourceOptions(ItemOptions, total=False):
    """A resource's options, besides ``ItemOptions``.

    - ``mime_type``: the ``mimeType`` of its contents, listed and read.
    - ``extra``: further ``Resource`` fields as they go on the wire.
    - ``annotations``: ``Annotations`` (``audience``, ``priority``, ``lastModified``).
    - ``cache``: the ``ttlMs`` and ``cacheScope`` its reads carry (else the server's
      ``Caching.read``).
    - ``size``: its size in bytes, before any encoding.
    """

    mime_type: str | None
    extra: Mapping[str, Any] | None
    annotations: Mapping[str, Any] | None
    cache: CacheHint | None
    size: int | None


def check(kind: type[ItemOptions], given: Mapping[str, Any], what: str) -> None:
    """``TypeError`` naming any option ``kind`` does not declare (a misspelt one)."""
    known = kind.__annotations__.keys()  # a TypedDict's, with its bases' keys
    unknown = sorted(set(given) - known)
    if unknown:
        raise TypeError(
            f"{what} got unexpected option(s) {', '.join(map(repr, unknown))};"
            f" it takes {', '.join(sorted(known))}"
        )
