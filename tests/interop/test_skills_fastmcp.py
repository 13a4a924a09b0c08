"""FastMCP 4.2.3's client (``SkillsClientExtension``, ``list_skills``, ``read_skill``)
against examples/skills_server.py over HTTP, as separate processes: it lists the skills
snodo serves and reads every static one, which it checks file by file against the
entry's digests and sizes and the frontmatter against ``SKILL.md``."""

from __future__ import annotations

import hashlib
import json
import subprocess

from tests.support.fastmcp import fastmcp_python
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

TARGET = "examples/skills_server.py:server"
CLIENT = ROOT / "interop" / "fastmcp" / "list_skills.py"


def test_fastmcp_lists_and_reads_the_skills_of_a_snodo_server() -> None:
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        done = subprocess.run(
            [str(fastmcp_python()), str(CLIENT), f"{server.base}/mcp"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["protocolVersion"] == "2026-07-28"
    entries = {entry["uri"]: entry for entry in seen["skills"]}
    assert sorted(entries) == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
        "skill://reports/daily/SKILL.md",
    ]
    assert entries["skill://reports/daily/SKILL.md"]["resources"] == "dynamic"
    assert entries["skill://git-workflow/SKILL.md"]["frontmatter"]["metadata"] == {
        "version": "1.2",
        "reviewed": "2026-11-02",
    }
    skills = ROOT / "examples" / "skills"
    assert set(seen["files"]) == set(entries) - {"skill://reports/daily/SKILL.md"}
    for uri, files in seen["files"].items():
        folder = skills / uri.removeprefix("skill://").removesuffix("/SKILL.md")
        on_disk = {
            p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.rglob("*")
            if p.is_file()
        }
        assert files == on_disk, uri
