"""A served skill's files attacked on disk after ``snodo run`` started, with reload on and
off: a file swapped for a link out of the root (to the same bytes, or to others), a
folder swapped for a link, a file swapped for a FIFO, a file rewritten. None is served:
each read is a -32602 at once, more FIFO reads than the server has threads leave it
answering, and with reload the scan that finds the links keeps the skills it had.

A SKILL.md made of YAML aliases (a few hundred bytes naming millions of strings) stops
``snodo run`` at start with the reason, and at a reload leaves the previous skills
served, instead of stalling the scan.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from snodo.client import Client, RequestError
from tests.support.paths import ROOT
from tests.support.processes import Serving, serving, snodo_run

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and POSIX links")

TARGET = "tests/extensions/skills/root_server.py:server"
NOTES = b"Step one: ask the customer for the order number.\n"
SECRET = b"TOP SECRET: the payments key is 0000-1111-2222.\n"[: len(NOTES)]
ATTACKS = ("outside-same-bytes", "outside-other-bytes", "folder-link", "fifo", "rewritten")
BOMB = (
    "---\nname: bomb\ndescription: aliases\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{name}: &{name} [{','.join([f'*{before}'] * 9)}]\n"
        for before, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "---\n\n# bomb\n"
)
"""A SKILL.md of 390 bytes whose ``i`` names 9**9 strings."""


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: Refunds, step by step\n---\n\n# {name}\n"


def fill(root: Path, outside: Path) -> None:
    for name in ATTACKS:
        (root / name / "data").mkdir(parents=True)
        (root / name / "SKILL.md").write_text(skill_md(name))
        (root / name / "data" / "notes.txt").write_bytes(NOTES)
    (outside / "data").mkdir(parents=True)
    (outside / "data" / "notes.txt").write_bytes(NOTES)
    (outside / "notes.txt").write_bytes(NOTES)
    (outside / "secret.txt").write_bytes(SECRET)


def attack(root: Path, outside: Path, name: str) -> None:
    target = root / name / "data" / "notes.txt"
    if name == "folder-link":
        shutil.rmtree(target.parent)
        os.symlink(outside / "data", target.parent)
        return
    if name == "rewritten":
        target.write_bytes(SECRET)
        return
    target.unlink()
    if name == "fifo":
        os.mkfifo(target)
    else:
        source = "notes.txt" if name == "outside-same-bytes" else "secret.txt"
        os.symlink(outside / source, target)


@pytest.fixture(params=[False, True], ids=["reload-off", "reload-on"])
def served(request: Any, tmp_path: Path) -> Iterator[tuple[Serving, Path, Path, bool]]:
    root, outside = tmp_path / "skills", tmp_path / "outside"
    fill(root, outside)
    env = {"SNODO_SKILLS_ROOT": str(root), "SNODO_SKILLS_RELOAD": "1" if request.param else ""}
    command = lambda port: snodo_run(TARGET, "http", "--port", str(port))  # noqa: E731
    with serving(command, env=env) as server:
        yield server, root, outside, request.param


async def read(client: Client, uri: str) -> dict[str, Any]:
    return await client.request("resources/read", {"uri": uri})


def test_a_file_swapped_after_start_is_not_served(
    served: tuple[Serving, Path, Path, bool],
) -> None:
    server, root, outside, _ = served

    async def scenario() -> None:
        async with Client.http(f"{server.base}/mcp") as client:
            before = await client.request("skills/list", {})
            for name in ATTACKS:
                got = await read(client, f"skill://{name}/data/notes.txt")
                assert got["contents"][0]["text"] == NOTES.decode()
            for name in ATTACKS:
                attack(root, outside, name)
            for name in ATTACKS:
                with pytest.raises(RequestError) as refused:
                    await read(client, f"skill://{name}/data/notes.txt")
                assert refused.value.code == -32602, name
                assert "is not as its skill lists it" in refused.value.message, name
                assert "SECRET" not in str(refused.value.data), name
            # More FIFO reads at once than the server has threads (40): none holds one.
            fifo = "skill://fifo/data/notes.txt"
            answers = await asyncio.gather(
                *(read(client, fifo) for _ in range(60)), return_exceptions=True
            )
            assert all(isinstance(a, RequestError) and a.code == -32602 for a in answers)
            untouched = await read(client, "skill://fifo/SKILL.md")
            assert untouched["contents"][0]["text"] == skill_md("fifo")
            # With reload, the scan meets the links out of the root: the skills it had stay.
            after = await client.request("skills/list", {})
            assert after["skills"] == before["skills"]
            with pytest.raises(RequestError):
                await read(client, "skill://outside-same-bytes/data/notes.txt")

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_an_alias_bomb_stops_start_up_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "bomb").mkdir()
    (tmp_path / "bomb" / "SKILL.md").write_text(BOMB)
    assert len(BOMB.encode()) == 390
    run = subprocess.run(
        snodo_run(TARGET, "http", "--port", "0"),
        cwd=ROOT,
        env={**os.environ, "SNODO_SKILLS_ROOT": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode != 0
    assert "aliases expand it past" in run.stderr, run.stderr


def test_an_alias_bomb_at_reload_keeps_the_skills_served(tmp_path: Path) -> None:
    (tmp_path / "bomb").mkdir()
    (tmp_path / "bomb" / "SKILL.md").write_text(skill_md("bomb"))
    env = {"SNODO_SKILLS_ROOT": str(tmp_path), "SNODO_SKILLS_RELOAD": "1"}

    async def scenario(url: str) -> None:
        async with Client.http(url) as client:
            before = await client.request("skills/list", {})
            (tmp_path / "bomb" / "SKILL.md").write_text(BOMB)
            after = await client.request("skills/list", {})
            assert after["skills"] == before["skills"]
            # The file on disk is no longer the one listed: not served either.
            with pytest.raises(RequestError) as refused:
                await read(client, "skill://bomb/SKILL.md")
            assert refused.value.code == -32602

    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port)), env=env) as server:
        asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 60))
