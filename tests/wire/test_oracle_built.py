"""Every pinned revision's package (found from ``schema/``, not listed) against JSON Schema
2020-12 over its raw pinned schema, on instances built from every definition (required
members only, every member, each union branch) and every near-miss mutation of them.

A revision added with ``python -m generator add-revision`` is checked here with no edit.
The revisions' own files (``test_oracle.py``, ``test_oracle_2025_11_25.py``) add the
spec's examples, literal messages and the documented divergences.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.revisions import Revision
from tests.support.instances import Builder
from tests.support.oracle import Oracle
from tests.support.packages import core, raw

CASES = [
    (revision, name, label, instance)
    for revision in core()
    for name in sorted(raw(revision)["$defs"])
    for label, instance in Builder(raw(revision)["$defs"]).cases(name)
]
_ORACLES: dict[str, Oracle] = {}


def _oracle(revision: Revision) -> Oracle:
    if revision.package not in _ORACLES:
        _ORACLES[revision.package] = Oracle(raw(revision), revision.package)
    return _ORACLES[revision.package]


@pytest.mark.parametrize("revision", core(), ids=[r.package for r in core()])
def test_every_definition_yields_cases(revision: Revision) -> None:
    mine = [name for r, name, _, _ in CASES if r.pin.revision == revision.pin.revision]
    built = set(mine)
    assert built == set(raw(revision)["$defs"])
    assert len(mine) > len(built)


@pytest.mark.parametrize(
    ("revision", "name", "instance"),
    [(revision, name, instance) for revision, name, _, instance in CASES],
    ids=[f"{r.package}/{name}/{label}" for r, name, label, _ in CASES],
)
def test_built_instances_agree_with_json_schema(
    revision: Revision, name: str, instance: Any
) -> None:
    oracle = _oracle(revision)
    assert oracle.schema_accepts(name, instance), "the builder made an invalid instance"
    assert oracle.model_accepts(name, instance)
    checked, disagreements = oracle.disagreements(name, instance)
    assert checked > 0 or instance in ({}, [])
    assert not disagreements, ("undocumented divergence from JSON Schema", disagreements)
