"""JSON Schemas from Python types, as a tool's ``inputSchema`` and ``outputSchema``.

pydantic titles every model after its class and every property after its name; on the
wire that is noise. ``schema_of`` leaves those generated titles out at every level,
nested models included, and keeps every title the author wrote (``Field(title=...)``,
a model's ``model_config`` title).
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

__all__ = ["UntitledSchema", "schema_of"]


class UntitledSchema(GenerateJsonSchema):
    """pydantic's generator, without the titles it makes up."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: Any) -> Any:
        out = super().model_schema(schema)
        config = getattr(schema.get("cls"), "model_config", None) or {}
        if "title" not in config and isinstance(out, dict):
            out.pop("title", None)
        return out

    def dataclass_schema(self, schema: Any) -> Any:
        return _untitled(super().dataclass_schema(schema))

    def typed_dict_schema(self, schema: Any) -> Any:
        return _untitled(super().typed_dict_schema(schema))


def _untitled(out: Any) -> Any:
    """A dataclass's or TypedDict's schema without the class name pydantic titles it by."""
    if isinstance(out, dict):
        out.pop("title", None)
    return out


def schema_of(annotation: Any) -> dict[str, Any]:
    """The JSON Schema of ``annotation`` with no generated titles."""
    schema: dict[str, Any] = TypeAdapter(annotation).json_schema(schema_generator=UntitledSchema)
    return schema
