"""Progressive tool disclosure on the wire: SEP-2636 and SEP-1821, as an extension.

Two proposals for the specification, neither in a pinned revision: SEP-2636 adds
``tools/catalog`` (a compact entry per tool: name, title, one-sentence summary, a
hash of its full definition, its annotations; filtered by an optional ``query``) and
``tools/describe`` (the full definitions of named tools), and SEP-1821 a ``query`` on
``tools/list``. Both put their flag in the ``tools`` capability, which a pinned
revision's capabilities do not carry, so a server offers them here as the experimental
extension ``EXTENSION_ID``, with the methods it serves in its settings; the methods
answer both eras. ``ToolSearch`` answers the ``query``: the same search as
``search_tools``, on the caller's own catalog.

As SEP-2636 asks: entries carry only the fields it defines; ``tools/describe``
answers in the order asked, and a name this caller cannot see, whether it exists or
not, fails the whole request with -32002 and ``data.unknownNames``. ``schemaHash`` is
the lowercase hex SHA-256 of the definition's canonical JSON (keys sorted, no
whitespace, UTF-8: ``snodo.core.state.canonical``, which writes a float such as ``1.0`` as
written where RFC 8785 would write ``1``).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Final, Protocol

from pydantic import BaseModel, ConfigDict, Field

from snodo.core.context import Context
from snodo.core.errors import InvalidParams, McpError
from snodo.core.state.canonical import encode
from snodo.server.extensions import Extension
from snodo.server.methods import revised_items
from snodo.server.pagination import page

if TYPE_CHECKING:
    from snodo.server import Server
    from snodo.server.methods import ServerOffering

__all__ = [
    "EXTENSION_ID",
    "MAX_NAMES",
    "Searcher",
    "UnknownToolNames",
    "catalog_entry",
    "disclosure_extension",
    "schema_hash",
]

EXTENSION_ID: Final = "io.snodo/tool-search"
"""The experimental extension's identifier."""
SETTINGS: Final = {
    "methods": ["tools/catalog", "tools/describe"],
    "listQuery": True,
    "proposals": ["SEP-2636", "SEP-1821"],
}
MAX_NAMES: Final = 100
"""The most names one ``tools/describe`` takes."""
_SUMMARY: Final = 200
_ANNOTATIONS: Final = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


class Catalog(Protocol):
    """A caller's catalog as a search keeps it (``snodo.search.serving``)."""

    definitions: list[dict[str, Any]]
    by_name: dict[str, dict[str, Any]]


class Searcher(Protocol):
    """What the extension asks of the search (``snodo.search.serving.ToolSearch``)."""

    async def search(
        self, served: ServerOffering, ctx: Context, query: str, limit: int | None = None
    ) -> tuple[list[str], Catalog]:
        """The names of the caller's tools that fit ``query``, best first, and its catalog."""
        ...

    async def catalog(self, served: ServerOffering, ctx: Context) -> Catalog:
        """The tools this caller may see."""
        ...


class UnknownToolNames(McpError):
    """-32002 (SEP-2636): names the caller's catalog does not have, all of them in
    ``data.unknownNames``; a hidden tool's name is as unknown as a missing one's."""

    code = -32002
    default_message = "Unknown tool names"

    def __init__(self, names: list[str]) -> None:
        super().__init__(f"Unknown tool names: {', '.join(names)}", {"unknownNames": names})


class CatalogParams(BaseModel):
    model_config = ConfigDict(extra="ignore")
    cursor: str | None = None
    query: Annotated[str | None, Field(max_length=1000)] = None


class DescribeParams(BaseModel):
    model_config = ConfigDict(extra="ignore")
    names: Annotated[list[str], Field(min_length=1, max_length=MAX_NAMES)]


def schema_hash(definition: Mapping[str, Any]) -> str:
    """SEP-2636's ``schemaHash`` of a full tool definition."""
    return hashlib.sha256(encode(dict(definition)).encode()).hexdigest()


def catalog_entry(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's ``ToolCatalogEntry``: name, title, summary (the description's first
    sentence, at most 200 characters), schema hash, the annotations a catalog may show."""
    entry: dict[str, Any] = {"name": definition["name"]}
    if isinstance(definition.get("title"), str):
        entry["title"] = definition["title"]
    entry["summary"] = summary(definition.get("description"))
    entry["schemaHash"] = schema_hash(definition)
    annotations = definition.get("annotations")
    if isinstance(annotations, Mapping):
        shown = {key: annotations[key] for key in _ANNOTATIONS if key in annotations}
        if shown:
            entry["annotations"] = shown
    return entry


def summary(description: Any) -> str:
    """The first sentence of a description, cut at 200 characters ("" for none)."""
    if not isinstance(description, str):
        return ""
    text = " ".join(description.split())
    for end in (". ", "! ", "? ", "\n"):
        cut = text.find(end)
        if 0 <= cut < _SUMMARY:
            text = text[: cut + 1]
            break
    return text if len(text) <= _SUMMARY else text[: _SUMMARY - 1].rstrip() + "…"


def disclosure_extension(search: Searcher, server: Server) -> Extension:
    """The extension as ``server`` offers it, answered by ``search``."""
    extension = Extension(EXTENSION_ID, SETTINGS)

    @extension.method("tools/catalog", params=CatalogParams, proposal="SEP-2636")
    async def tools_catalog(ctx: Context, params: CatalogParams) -> dict[str, Any]:
        served = _plain(server)
        if params.query is not None:
            if params.cursor is not None:  # a query's answer is one page: no cursor of it
                raise InvalidParams("Invalid cursor")
            found, entry = await search.search(served, ctx, params.query)
            named = _revised(served, ctx, [entry.by_name[name] for name in found])
            return {"tools": [catalog_entry(d) for d in named]}
        entry = await search.catalog(served, ctx)
        chosen, next_cursor = page(
            entry.definitions, "tools/catalog", params.cursor, served.page_size
        )
        listed = _revised(served, ctx, list(chosen))
        result: dict[str, Any] = {"tools": [catalog_entry(d) for d in listed]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    @extension.method("tools/describe", params=DescribeParams, proposal="SEP-2636")
    async def tools_describe(ctx: Context, params: DescribeParams) -> dict[str, Any]:
        served = _plain(server)
        entry = await search.catalog(served, ctx)
        unknown = [name for name in params.names if name not in entry.by_name]
        if unknown:
            raise UnknownToolNames(list(dict.fromkeys(unknown)))
        return {"tools": _revised(served, ctx, [entry.by_name[name] for name in params.names])}

    return extension


def _revised(served: ServerOffering, ctx: Context, definitions: list[Any]) -> list[Any]:
    """Catalog definitions as the request's revision lists them (a tool's
    ``outputVariants`` under SEP-3279's draft), so that a schema hash is of the
    definition ``tools/describe`` answers."""
    return revised_items(served, ctx.revision, "tools", definitions)


def _plain(server: Server) -> ServerOffering:
    """The server's ``ServerOffering`` as a search reads it (without the search layer)."""
    plain = copy.copy(server.offering)
    plain.search_with(None)
    return plain
