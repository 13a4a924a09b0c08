"""Validators the publishing tests hold snodo's documents to: the raw pinned document
schema (``jsonschema``, each in its own draft) where it is at hand, else the committed
package generated from it. Support, not a test module.

The Server Card's and the registry's schemas are published only on GitHub; a machine that
cannot reach it still checks each document against the models compiled from the pinned
file, whose drift the generator tests guard where the file is at hand."""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

import jsonschema
from pydantic import BaseModel, ValidationError

from generator.revisions import Revision
from tests.support.packages import at_hand, documents, raw


def _revision(pin: str) -> Revision:
    (revision,) = [r for r in documents() if r.pin.revision == pin]
    return revision


@cache
def validator(pin: str) -> Any:
    """The raw pinned schema of ``pin`` (``server-card``, ``server-json``,
    ``mcpb-manifest``) as a validator of a whole document."""
    revision = _revision(pin)
    schema = raw(revision)
    document = revision.overlay.document
    assert document is not None
    if not {"$ref", "type", "properties"} & set(schema):  # no root: the overlay names it
        schema = {**schema, "$ref": f"#/$defs/{document.root}"}
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@cache
def model(pin: str) -> type[BaseModel]:
    """The generated model of the whole document ``pin`` describes."""
    revision = _revision(pin)
    document = revision.overlay.document
    assert document is not None
    found: type[BaseModel] = getattr(importlib.import_module(revision.package), document.root)
    return found


@cache
def _raw_at_hand(pin: str) -> bool:
    """Whether the raw schema can be read here (found and hashed once per pin)."""
    return at_hand(_revision(pin))


def errors(pin: str, document: Any) -> list[str]:
    """What the pinned schema refuses in ``document`` (empty: valid)."""
    if _raw_at_hand(pin):
        found = validator(pin).iter_errors(document)
        return [f"{list(e.absolute_path)}: {e.message}" for e in found]
    try:
        model(pin).model_validate(document)
    except ValidationError as exc:
        return [f"{list(e['loc'])}: {e['msg']}" for e in exc.errors()]
    return []
