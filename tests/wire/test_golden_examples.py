"""Every example message of the specification loads into the generated model its
folder names and dumps back to the same JSON, numeric types included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter

import snodo_wire
from tests.support.paths import example_files
from tests.support.typed_json import tagged

EXAMPLES = example_files()


def test_all_examples_are_present() -> None:
    assert len(EXAMPLES) == 129


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_example_round_trips(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    adapter: TypeAdapter[object] = TypeAdapter(getattr(snodo_wire, path.parent.name))
    from_bytes = adapter.validate_json(text)
    from_dict = adapter.validate_python(json.loads(text))
    for value in (from_bytes, from_dict):
        dumped = json.loads(adapter.dump_json(value, by_alias=True))
        assert tagged(dumped) == tagged(json.loads(text))
