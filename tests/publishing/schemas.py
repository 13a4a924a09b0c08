"""JSON Schema validators over the raw pinned document schemas (each in its own draft),
the oracle the publishing tests hold snodo's documents to. Support, not a test module."""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema

from tests.support.packages import documents, raw


@cache
def validator(pin: str) -> Any:
    """The raw pinned schema of ``pin`` (``server-card``, ``server-json``,
    ``mcpb-manifest``) as a validator of a whole document."""
    (revision,) = [r for r in documents() if r.pin.revision == pin]
    schema = raw(revision)
    document = revision.overlay.document
    assert document is not None
    if not {"$ref", "type", "properties"} & set(schema):  # no root: the overlay names it
        schema = {**schema, "$ref": f"#/$defs/{document.root}"}
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def errors(pin: str, document: Any) -> list[str]:
    """What the pinned schema refuses in ``document`` (empty: valid)."""
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator(pin).iter_errors(document)]
