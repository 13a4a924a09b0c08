"""A schema the project translated from a specification that publishes none (the Skills
extension): committed beside its pin, read from there alone, held to its sha256."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from generator.__main__ import check_repeated, main
from generator.revisions import SCHEMA_ROOT, load_revision
from generator.source import SchemaSourceError, at_hand, locate_schema, sha256_of

SKILLS = load_revision(SCHEMA_ROOT / "ext-skills")


def test_the_pin_names_the_specification_text_it_translates() -> None:
    pin = SKILLS.pin
    assert (pin.repository, pin.path) == (
        "modelcontextprotocol/ext-skills",
        "specification/stable/skills.mdx",
    )
    assert len(pin.commit) == 40 and pin.commit in pin.url
    assert "GetSkillRequest" in pin.translated and "verbatim" in pin.translated


def test_it_is_read_beside_the_pin_whatever_folder_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SNODO_SCHEMA_DIR", str(tmp_path))  # holds nothing
    assert at_hand(SKILLS.pin, tmp_path)
    path, data = locate_schema(SKILLS.pin, tmp_path)
    assert path == SCHEMA_ROOT / "ext-skills" / "schema.json"
    assert sha256_of(data) == SKILLS.pin.sha256


def test_an_edit_without_its_pin_is_refused() -> None:
    edited = dataclasses.replace(SKILLS.pin, sha256="0" * 64)
    with pytest.raises(SchemaSourceError, match="refusing to generate"):
        locate_schema(edited)


def test_a_pin_without_the_committed_file_says_where_it_should_be() -> None:
    elsewhere = dataclasses.replace(SKILLS.pin, revision="ext-nothing")
    with pytest.raises(SchemaSourceError, match=r"ext-nothing/schema\.json is missing"):
        locate_schema(elsewhere)


def test_its_copies_of_the_base_definitions_agree() -> None:
    schema = json.loads(locate_schema(SKILLS.pin)[1])
    assert check_repeated(schema, SKILLS, None) == []
    assert {"Resource", "PaginatedRequestParams", "Result"} <= set(schema["$defs"])


def test_upstream_says_it_has_nothing_to_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a mirror that holds nothing, the other pins are "not published"; the
    translated one is named with its source and never fetched."""
    from generator import upstream

    fetched: list[str] = []
    monkeypatch.setattr(upstream, "_fetch", fetched.append)
    main(["upstream", "--source", "http://127.0.0.1:9/"])
    lines = capsys.readouterr().out.splitlines()
    assert (
        "ext-skills: translated from modelcontextprotocol/ext-skills "
        f"specification/stable/skills.mdx at {SKILLS.pin.commit}; compare that text by hand"
    ) in lines
    assert not [url for url in fetched if "ext-skills" in url]
