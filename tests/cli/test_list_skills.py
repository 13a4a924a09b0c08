"""``snodo list`` of a server declaring skills: a ``skills (N)`` section, each skill by
the URI of its ``SKILL.md`` and its description, and the entries under ``skills`` with
``--output json``; a server without the extension gets no such section. The server
has no tools: it is listed without asking for them (it would answer -32601)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.processes import snodo

TARGET = "tests/extensions/skills/handmade_server.py:server"


def test_list_prints_the_skills_section() -> None:
    done = snodo("list", TARGET)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("skills (2)")
    assert lines[at + 1 : at + 3] == [
        "  skill://acme/refunds/SKILL.md  Process refunds",
        "  skill://git-workflow/SKILL.md  Branch and commit",
    ]
    assert "  io.modelcontextprotocol/skills" in lines


def test_list_json_carries_the_entries() -> None:
    done = snodo("list", TARGET, "--output", "json")
    assert done.returncode == 0, done.stderr
    skills = json.loads(done.stdout)["skills"]
    assert [s["uri"] for s in skills] == [
        "skill://acme/refunds/SKILL.md",
        "skill://git-workflow/SKILL.md",
    ]
    refunds = skills[0]
    assert refunds["frontmatter"] == {"name": "refunds", "description": "Process refunds"}
    assert [r["size"] for r in refunds["resources"]] == [62, 15]


def test_no_skills_section_without_the_extension() -> None:
    done = snodo("list", "examples/preferences.py:server")
    assert done.returncode == 0, done.stderr
    assert "skills (" not in done.stdout


def test_json_keeps_a_frontmatter_field_written_empty(tmp_path: Path) -> None:
    """``note:`` is null in the frontmatter: the entry carries it, and so does the JSON
    (the other lists leave out the null fields of their items; an entry's frontmatter
    is the author's as written)."""
    folder = tmp_path / "skills" / "nully"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: nully\ndescription: d\nnote:\n---\nbody\n")
    (tmp_path / "served.py").write_text(
        "from pathlib import Path\n"
        "from snodo.extensions.skills import Skills\n"
        "from snodo.server import Server\n"
        "server = Server('nully', '1.0.0')\n"
        "Skills(server, Path(__file__).parent / 'skills')\n"
    )
    done = snodo("list", f"{tmp_path / 'served.py'}:server", "--output", "json")
    assert done.returncode == 0, done.stderr
    [skill] = json.loads(done.stdout)["skills"]
    assert skill["frontmatter"] == {"name": "nully", "description": "d", "note": None}
