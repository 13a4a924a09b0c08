"""Instances built from a JSON schema definition, for revisions whose spec publishes no
example messages: for each definition, one with only the required members and one
with every member, and one per branch of a union.

Values are the plainest that satisfy each keyword the schemas use (const, enum, type,
minimum/maximum, items, allOf/anyOf); a test asserts the schema accepts every
instance, so a builder gap shows up as a failure, not as a silently skipped case.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

JSON = Any
MAX_DEPTH = 6


class Builder:
    def __init__(self, defs: dict[str, JSON]) -> None:
        self.defs = defs

    def cases(self, name: str) -> Iterator[tuple[str, JSON]]:
        node = self.defs[name]
        branches = node.get("anyOf") or node.get("oneOf")
        if branches:
            for index, branch in enumerate(branches):
                yield f"branch {index}", self.value(branch, full=True, depth=0)
            return
        yield "required only", self.value(node, full=False, depth=0)
        yield "every member", self.value(node, full=True, depth=0)

    def value(self, node: JSON, *, full: bool, depth: int) -> JSON:
        if "$ref" in node:
            return self.value(self.defs[node["$ref"].rsplit("/", 1)[-1]], full=full, depth=depth)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][0]
        if "allOf" in node:
            merged: dict[str, JSON] = {}
            for part in node["allOf"]:
                merged.update(self.value(part, full=full, depth=depth))
            return merged
        if "anyOf" in node or "oneOf" in node:
            return self.value((node.get("anyOf") or node["oneOf"])[0], full=full, depth=depth)
        kind = node.get("type")
        if isinstance(kind, list):
            kind = kind[0]
        if kind == "object" or (kind is None and "properties" in node):
            return self._object(node, full=full, depth=depth)
        if kind == "array":
            items = node.get("items", {"type": "string"})
            return [self.value(items, full=full, depth=depth + 1)]
        return self._scalar(node, kind)

    def _object(self, node: JSON, *, full: bool, depth: int) -> dict[str, JSON]:
        required = set(node.get("required", ()))
        shallow = full and depth < MAX_DEPTH
        return {
            key: self.value(sub, full=shallow, depth=depth + 1)
            for key, sub in node.get("properties", {}).items()
            if (key in required or shallow) and sub != {"not": {}}  # never present
        }

    @staticmethod
    def _scalar(node: JSON, kind: str | None) -> JSON:
        if kind == "string":
            formats = {
                "uri": "https://example.com/a",
                "byte": "aGk=",
                "date-time": "2026-01-26T12:00:00Z",
            }
            return formats.get(node.get("format"), "a")
        if kind == "integer":
            return int(node.get("minimum", 1))
        if kind == "number":
            return node.get("minimum", 0) + 0.5 if "maximum" in node else 2.5
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return {"any": [1, "two"]}  # no type: any JSON value
