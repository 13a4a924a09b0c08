"""Every example message of the specification loads into the generated model its
folder names and dumps back to the same JSON, numeric types included: for each pinned
revision that publishes examples (found from ``schema/``, not listed)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from generator.revisions import Revision
from tests.support.packages import core, example_files
from tests.support.typed_json import tagged

CASES = [(revision, path) for revision in core() for path in example_files(revision)]


def test_all_examples_are_present() -> None:
    published = {revision.pin.revision: len(example_files(revision)) for revision in core()}
    assert published["2026-07-28"] == 129


@pytest.mark.parametrize(
    ("revision", "path"),
    CASES,
    ids=[f"{r.package}/{p.parent.name}/{p.stem}" for r, p in CASES],
)
def test_example_round_trips(revision: Revision, path: Path) -> None:
    package = importlib.import_module(revision.package)
    text = path.read_text(encoding="utf-8")
    adapter: TypeAdapter[object] = TypeAdapter(getattr(package, path.parent.name))
    from_bytes = adapter.validate_json(text)
    from_dict = adapter.validate_python(json.loads(text))
    for value in (from_bytes, from_dict):
        dumped = json.loads(adapter.dump_json(value, by_alias=True))
        assert tagged(dumped) == tagged(json.loads(text))
