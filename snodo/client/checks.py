"""What a client checks of what a server sends, where the specification asks it to.

- ``OutputSchemas``: a tool's ``structuredContent`` against the ``outputSchema`` its
  listing gave (server/tools.mdx: clients SHOULD validate structured results), with
  jsonschema-rs, offline (a ``$ref`` is never fetched); a mismatch is
  ``OutputMismatch`` naming where. A tool never listed is not checked.
- ``safe_icons``: icons whose ``src`` is not ``https:`` or ``data:`` are dropped from an
  item (basic/index.mdx, "Icons": clients must reject other schemes); ``safe_result``
  applies it wherever a result carries icons (the server's ``serverInfo`` in
  ``_meta``, listed items, resource links in tool results and prompt messages, a
  task's result), before the client keeps or returns anything; ``listed_tool`` also
  fills a tool's annotation defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import jsonschema_rs

from snodo.client.errors import OutputMismatch
from snodo.client.results import with_defaults
from snodo.revisions.authoring.protocol import META_SERVER_INFO

__all__ = ["SAFE_ICON_SCHEMES", "OutputSchemas", "listed_tool", "safe_icons", "safe_result"]

SAFE_ICON_SCHEMES = frozenset({"https", "data"})
"""Where a listed icon may come from."""


class OutputSchemas:
    """The output schemas of the tools listed last, compiled when first used: each
    tool's ``outputSchema``, or, from a revision of SEP-3279's variants, the schema of
    each of its structured ``outputVariants``."""

    def __init__(self) -> None:
        self.schemas: dict[str, Mapping[str, Any]] = {}
        self.variants: dict[tuple[str, str], Mapping[str, Any]] = {}
        """(tool, audience) to the schema of its structured variant for that audience."""
        self.compiled: dict[Any, Any] = {}

    def learn(self, tools: Iterable[Mapping[str, Any]]) -> None:
        """Take the output schemas of a fresh ``tools/list``."""
        self.schemas, self.variants = {}, {}
        for tool in tools:
            name = str(tool["name"])
            if isinstance(tool.get("outputSchema"), Mapping):
                self.schemas[name] = tool["outputSchema"]
            for variant in tool.get("outputVariants") or ():
                if (
                    isinstance(variant, Mapping)
                    and variant.get("format") == "structured"
                    and isinstance(variant.get("schema"), Mapping)
                ):
                    self.variants[(name, str(variant.get("audience")))] = variant["schema"]
        self.compiled = {}

    def check(self, name: str, raw: Mapping[str, Any]) -> None:
        """``OutputMismatch`` when the raw result ``raw`` does not honour the tool's
        schema: no ``structuredContent`` at all, or one that fails it; a structured
        output (``outputs``) is checked against its own variant's schema, never
        another audience's. Error results are not checked (server/tools.mdx: the
        schema describes a successful result)."""
        if raw.get("isError") is True:
            return
        outputs = raw.get("outputs")
        if isinstance(outputs, list):
            for output in outputs:
                if isinstance(output, Mapping) and output.get("format") == "structured":
                    audience = str(output.get("audience"))
                    schema = self.variants.get((name, audience))
                    if schema is not None:
                        where = f"its {audience} structured output"
                        self._check(
                            (name, audience), schema, output.get("structuredContent"), where
                        )
            return
        schema = self.schemas.get(name)
        if schema is None:
            return
        if "structuredContent" not in raw:
            raise OutputMismatch(
                f"tool {name} declares an outputSchema but sent no structuredContent"
            )
        self._check(name, schema, raw["structuredContent"], "structuredContent")

    def _check(self, key: Any, schema: Mapping[str, Any], content: Any, what: str) -> None:
        name = key if isinstance(key, str) else key[0]
        validator = self.compiled.get(key)
        if validator is None:
            try:
                validator = jsonschema_rs.validator_for(dict(schema), offline=True)
            except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError):
                return  # an unusable schema checks nothing; the listing is the server's fault
            self.compiled[key] = validator
        if validator.is_valid(content):
            return
        for error in validator.iter_errors(content):
            where = "/".join(str(step) for step in error.instance_path)
            raise OutputMismatch(
                f"tool {name} sent {what} outside its "
                f"{'outputSchema' if isinstance(key, str) else 'variant schema'}: "
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


LISTED = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
"""Each list method, and the key of its items."""


def safe_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` of ``method`` without the icons a host should not fetch, wherever the
    schema puts icons in it (``Implementation``, ``Tool``, ``Resource``,
    ``ResourceTemplate``, ``Prompt``, ``ResourceLink``); anything else, such as a tool's
    ``structuredContent``, is the server's data and left alone. ``result`` is not
    changed: a copy is made where something is dropped."""
    kept = result
    meta = result.get("_meta")
    if isinstance(meta, dict):
        info = meta.get(META_SERVER_INFO)
        if isinstance(info, dict) and safe_icons(info) is not info:
            kept = {**kept, "_meta": {**meta, META_SERVER_INFO: safe_icons(info)}}
    key = LISTED.get(method)
    if key is not None:
        return _each(kept, key, safe_icons)
    kept = _each(kept, "content", _safe_block)
    kept = _each(kept, "messages", _safe_message)
    task_result = kept.get("result") if method == "tasks/get" else None
    if isinstance(task_result, dict):  # a completed task: the result of its request
        inner = safe_result("", task_result)
        if inner is not task_result:
            kept = {**kept, "result": inner}
    return kept


def _each(
    holder: dict[str, Any], key: str, clean: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """``holder`` with ``clean`` applied to each object of its list ``key``."""
    items = holder.get(key)
    if not isinstance(items, list):
        return holder
    cleaned = [clean(item) if isinstance(item, dict) else item for item in items]
    if all(new is old for new, old in zip(cleaned, items, strict=True)):
        return holder
    return {**holder, key: cleaned}


def _safe_block(block: dict[str, Any]) -> dict[str, Any]:
    return safe_icons(block) if block.get("type") == "resource_link" else block


def _safe_message(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, dict):
        return message
    cleaned = _safe_block(content)
    return message if cleaned is content else {**message, "content": cleaned}


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
