"""JSON Schema validation of tool arguments and structured output.

Schemas are compiled once, when a tool is registered, by jsonschema-rs (native code,
JSON Schema 2020-12 by default, the dialect named by ``$schema`` otherwise: 2019-09,
draft 7, 6 and 4). Compilation is offline: a ``$ref`` to a network URI is never
fetched (basic/index.mdx, "JSON Schema usage"), so a schema that needs one is refused
at registration rather than silently treated as permissive. Local references
(``#/$defs/...``, ``$anchor``) work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

__all__ = ["CompiledSchema", "SchemaError", "compile_schema"]


class SchemaError(ValueError):
    """A schema that cannot be used: invalid, unknown dialect, or unresolvable $ref."""


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    schema: Mapping[str, Any]
    _validator: Any

    def is_valid(self, instance: Any) -> bool:
        return bool(self._validator.is_valid(instance))

    def first_error(self, instance: Any) -> str | None:
        """A one-line reason naming where the instance failed, or None when valid."""
        if self._validator.is_valid(instance):  # the usual case: no error objects built
            return None
        for error in self._validator.iter_errors(instance):
            where = "/".join(str(step) for step in error.instance_path)
            return f"{error.message} at /{where}" if where else str(error.message)
        return None


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    if not isinstance(schema, Mapping):
        raise SchemaError("a JSON Schema must be an object")
    try:
        validator = jsonschema_rs.validator_for(dict(schema), offline=True)
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
        reason = str(exc).split("\n", 1)[0]
        raise SchemaError(f"unusable JSON Schema: {reason}") from exc
    return CompiledSchema(schema, validator)
