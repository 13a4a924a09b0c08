"""What a client checks of what a server sends, where the specification asks it to.

- ``OutputSchemas``: a tool's ``structuredContent`` against the ``outputSchema`` its
  listing gave (server/tools.mdx: clients SHOULD validate structured results), with
  jsonschema-rs, offline (a ``$ref`` is never fetched); a mismatch is
  ``OutputMismatch`` naming where. A tool never listed is not checked.
- ``safe_icons``: icons whose ``src`` is not ``https:`` or ``data:`` are dropped from a
  listed item (basic/index.mdx, "Icons": hosts should not fetch from other schemes);
  ``listed_tool`` also fills a tool's annotation defaults.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import jsonschema_rs

from snodo.client.errors import OutputMismatch
from snodo.client.results import with_defaults
from snodo.revisions.authoring import CallToolResult

__all__ = ["SAFE_ICON_SCHEMES", "OutputSchemas", "listed_tool", "safe_icons"]

SAFE_ICON_SCHEMES = frozenset({"https", "data"})
"""Where a listed icon may come from."""


class OutputSchemas:
    """The output schemas of the tools listed last, compiled when first used."""

    def __init__(self) -> None:
        self.schemas: dict[str, Mapping[str, Any]] = {}
        self.compiled: dict[str, Any] = {}

    def learn(self, tools: Iterable[Mapping[str, Any]]) -> None:
        """Take the output schemas of a fresh ``tools/list``."""
        self.schemas = {
            str(tool["name"]): tool["outputSchema"]
            for tool in tools
            if isinstance(tool.get("outputSchema"), Mapping)
        }
        self.compiled = {}

    def check(self, name: str, result: CallToolResult) -> None:
        """``OutputMismatch`` when ``result`` does not honour the tool's schema: no
        ``structuredContent`` at all, or one that fails it. Error results are not
        checked (server/tools.mdx: the schema describes a successful result)."""
        schema = self.schemas.get(name)
        if schema is None or result.is_error is True:
            return
        raw = result.model_dump(mode="json", by_alias=True)
        if "structuredContent" not in raw:
            raise OutputMismatch(
                f"tool {name} declares an outputSchema but sent no structuredContent"
            )
        validator = self.compiled.get(name)
        if validator is None:
            try:
                validator = jsonschema_rs.validator_for(dict(schema), offline=True)
            except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError):
                return  # an unusable schema checks nothing; the listing is the server's fault
            self.compiled[name] = validator
        content = raw["structuredContent"]
        if validator.is_valid(content):
            return
        for error in validator.iter_errors(content):
            where = "/".join(str(step) for step in error.instance_path)
            raise OutputMismatch(
                f"tool {name} sent structuredContent outside its outputSchema: "
                f"{error.message} at /{where}"
            )


def safe_icons(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` without the icons a host should not fetch."""
    icons = item.get("icons")
    if not isinstance(icons, list):
        return item
    kept = [icon for icon in icons if isinstance(icon, Mapping) and _safe(icon.get("src"))]
    if len(kept) == len(icons):
        return item
    return {**item, "icons": kept}


def listed_tool(raw: dict[str, Any]) -> dict[str, Any]:
    """A listed tool as the client keeps it: safe icons only, and the specification's
    defaults of its annotations filled in."""
    tool = safe_icons(raw)
    annotations = tool.get("annotations")
    if not isinstance(annotations, dict):
        return tool
    return {**tool, "annotations": with_defaults("ToolAnnotations", annotations)}


def _safe(src: object) -> bool:
    return isinstance(src, str) and urlsplit(src).scheme.lower() in SAFE_ICON_SCHEMES
