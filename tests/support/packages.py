"""The wire packages the tests run on, found from ``schema/*/`` rather than listed, so a
revision added with ``python -m generator add-revision`` is tested with no edit here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.revisions import Revision, revisions
from generator.source import SchemaSourceError, locate_schema
from tests.support.paths import schema_dir


def discovered() -> tuple[Revision, ...]:
    """Every pinned revision, newest first, extensions included."""
    return revisions()


def core() -> tuple[Revision, ...]:
    """The pinned protocol revisions (no extension, no document schema)."""
    return tuple(
        r for r in revisions() if r.overlay.extension is None and r.overlay.document is None
    )


def documents() -> tuple[Revision, ...]:
    """The pinned document schemas (a Server Card, a registry entry, a bundle manifest)."""
    return tuple(r for r in revisions() if r.overlay.document is not None)


def modern() -> tuple[Revision, ...]:
    return tuple(r for r in core() if r.overlay.era == "modern")


def at_hand(revision: Revision) -> bool:
    """Whether the revision's pinned schema can be read here (a document schema published
    only on GitHub may not be: ``raw`` says so)."""
    try:
        locate_schema(revision.pin)
    except SchemaSourceError:
        return False
    return True


_RAW: dict[str, dict[str, Any]] = {}


def raw(revision: Revision) -> dict[str, Any]:
    """The pinned schema: from the shared schema folder, else where the generator finds
    it (the user cache holds a revision added from a file; a translation with a base is
    composed from the base's schema and its changes, as the generator composes it).

    A document schema published only on GitHub (the Server Card's, the registry's) that
    is not at hand skips the test asking for it, saying so: a machine that cannot reach
    GitHub checks the committed models, not the raw file they were generated from."""
    name = revision.pin.revision
    if name not in _RAW:
        path = schema_dir().parent / name / "schema.json"
        if path.is_file():
            data = path.read_bytes()
        else:
            try:
                data = locate_schema(revision.pin)[1]
            except SchemaSourceError as exc:
                if revision.overlay.document is None:
                    raise
                pytest.skip(f"the pinned {name} schema is not at hand: {exc}")
        _RAW[name] = json.loads(data)
    return _RAW[name]


def defined(revision: Revision) -> list[str]:
    """The definitions of the pinned schema (a draft-07 document's ``definitions``), and
    the document a document schema's root is, when it is an inline object."""
    schema = raw(revision)
    names = list(schema.get("$defs") or schema.get("definitions") or {})
    document = revision.overlay.document
    if document is not None and document.root not in names:
        names.append(document.root)
    return names


def example_files(revision: Revision) -> list[Path]:
    """The specification's example messages for ``revision``, where it publishes some."""
    return sorted((schema_dir().parent / revision.pin.revision / "examples").glob("*/*.json"))
