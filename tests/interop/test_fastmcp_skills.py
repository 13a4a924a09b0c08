"""snodo's client, ``snodo list`` and ``snodo proxy``/``mount`` against the skills of a
FastMCP 4.2.3 server (its ``SkillsDirectoryProvider``, a separate process under its own
interpreter, over Streamable HTTP): every skill listed and got, every file read and
verified against its entry's digest and size, and the bytes equal to the files on disk.
A file changed after the listing (the provider reads the folder again on each request)
is refused, and read once the entry is got again."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from snodo import Server
from snodo.client import Client, RequestError
from snodo.client.transports import MemoryTransport
from snodo.extensions import skills
from snodo.extensions.skills import SkillsClient, VerificationFailed
from snodo.gateway import mount
from tests.support.fastmcp import fastmcp_python
from tests.support.processes import SNODO, Serving, serving, snodo

SCRIPT = Path(__file__).with_name("fastmcp_skills_server.py")
GIT = "skill://git-workflow/SKILL.md"
REFUNDS = "skill://acme/refunds/SKILL.md"
LOGO = bytes(range(256))[::-1] * 2


def _write(root: Path) -> dict[str, bytes]:
    """The skills folder; returns each file's URI and bytes."""
    files = {
        "git-workflow/SKILL.md": (
            b"---\nname: git-workflow\ndescription: Branch and commit the team's way\n"
            b"metadata:\n  version: '2.1'\n---\n\n# Git workflow\n"
        ),
        "acme/refunds/SKILL.md": (
            b"---\nname: refunds\ndescription: Process refunds\nlicense: Apache-2.0\n---\n\n"
            b"Answer with examples/email.md.\n"
        ),
        "acme/refunds/examples/email.md": b"Dear customer,\n",
        "acme/refunds/assets/logo.png": LOGO,
    }
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return {f"skill://{relative}": content for relative, content in files.items()}


@pytest.fixture
def fastmcp(tmp_path: Path) -> Iterator[tuple[Serving, Path, dict[str, bytes]]]:
    root = tmp_path / "skills"
    files = _write(root)
    command = lambda port: [str(fastmcp_python()), str(SCRIPT), str(root), str(port)]  # noqa: E731
    with serving(command) as server:
        yield server, root, files


def _digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), 120))


def test_snodo_lists_gets_and_reads_the_skills_verified(
    fastmcp: tuple[Serving, Path, dict[str, bytes]],
) -> None:
    server, _, files = fastmcp

    async def scenario() -> None:
        async with Client.http(f"{server.base}/mcp") as client:
            listed = await SkillsClient(client).list_skills()
            assert sorted(s.uri for s in listed) == [REFUNDS, GIT]
            for skill in listed:
                assert skill == await SkillsClient(client).get_skill(skill.uri)
                assert isinstance(skill.resources, list)
                root = skill.uri.removesuffix("SKILL.md")
                on_disk = {u: c for u, c in files.items() if u.startswith(root)}
                assert {r.uri: (r.digest, r.size) for r in skill.resources} == {
                    u: (_digest(c), len(c)) for u, c in on_disk.items()
                }
                for item in skill.resources:
                    read = await SkillsClient(client).read_skill_file(skill, item.uri)
                    assert read.verified and read.content == files[item.uri]
            git = next(s for s in listed if s.uri == GIT)
            assert git.frontmatter.model_dump() == {
                "name": "git-workflow",
                "description": "Branch and commit the team's way",
                "metadata": {"version": "2.1"},
            }
            with pytest.raises(RequestError) as unknown:
                await SkillsClient(client).get_skill("skill://nothing/SKILL.md")
            assert unknown.value.code == -32602

    run(scenario)


def test_snodo_list_prints_the_skills(fastmcp: tuple[Serving, Path, dict[str, bytes]]) -> None:
    server, _, files = fastmcp
    text = snodo("list", f"{server.base}/mcp")
    assert text.returncode == 0, text.stderr
    section = text.stdout.split("skills (2)\n", 1)[1].splitlines()[:2]
    assert section == [
        f"  {REFUNDS}  Process refunds",
        f"  {GIT}  Branch and commit the team's way",
    ]
    raw = snodo("list", f"{server.base}/mcp", "--output", "json")
    assert raw.returncode == 0, raw.stderr
    skills = {s["uri"]: s for s in json.loads(raw.stdout)["skills"]}
    assert skills[REFUNDS]["frontmatter"]["license"] == "Apache-2.0"
    digests = {r["uri"]: r["digest"] for s in skills.values() for r in s["resources"]}
    assert digests == {uri: _digest(content) for uri, content in files.items()}


def test_a_file_changed_after_the_listing_is_refused(
    fastmcp: tuple[Serving, Path, dict[str, bytes]],
) -> None:
    server, root, _ = fastmcp
    email = root / "acme/refunds/examples/email.md"

    async def scenario() -> None:
        async with Client.http(f"{server.base}/mcp") as client:
            [refunds] = [s for s in await SkillsClient(client).list_skills() if s.uri == REFUNDS]
            email.write_bytes(b"Dear customer, reply with your password.\n")
            with pytest.raises(VerificationFailed) as refused:
                await SkillsClient(client).read_skill_file(refunds, "examples/email.md")
            assert refused.value.uri == "skill://acme/refunds/examples/email.md"
            # Same size, other bytes: the digest tells them apart.
            email.write_bytes(b"Dear customer!\n")
            with pytest.raises(VerificationFailed, match="digest"):
                await SkillsClient(client).read_skill_file(refunds, "examples/email.md")
            # A SKILL.md whose frontmatter changed fails against the held entry too.
            skill_md = root / "acme/refunds/SKILL.md"
            skill_md.write_bytes(skill_md.read_bytes().replace(b"Apache-2.0", b"MIT-0"))
            with pytest.raises(VerificationFailed):
                await SkillsClient(client).read_skill_file(refunds)
            fresh = await SkillsClient(client).get_skill(REFUNDS)
            assert fresh.frontmatter.model_dump()["license"] == "MIT-0"
            read = await SkillsClient(client).read_skill_file(fresh, "examples/email.md")
            assert read.content == b"Dear customer!\n"

    run(scenario)


def test_snodo_proxy_passes_the_skills_through(
    fastmcp: tuple[Serving, Path, dict[str, bytes]],
) -> None:
    server, _, files = fastmcp
    backend = f"{server.base}/mcp"
    proxy = lambda port: [*SNODO, "proxy", "--transport", "http", "--port", str(port), backend]  # noqa: E731
    with serving(proxy) as front:

        async def scenario() -> None:
            async with Client.http(f"{front.base}/mcp") as client:
                listed = await SkillsClient(client).list_skills()
                assert sorted(s.uri for s in listed) == [REFUNDS, GIT]
                for skill in listed:
                    for item in skill.resources:  # type: ignore[union-attr]
                        read = await SkillsClient(client).read_skill_file(skill, item.uri)
                        assert read.content == files[item.uri]

        run(scenario)


def test_mount_prefixes_the_fastmcp_skills_and_their_digests_stay_true(
    fastmcp: tuple[Serving, Path, dict[str, bytes]],
) -> None:
    server, _, files = fastmcp
    main = Server("main", "1.0.0")
    url = f"{server.base}/mcp"
    mount(main, lambda **o: Client.http(url, **o), prefix="fm", passing=[skills.passed()])

    async def scenario() -> None:
        async with Client(MemoryTransport(main)) as client:
            listed = await SkillsClient(client).list_skills()
            assert sorted(s.uri for s in listed) == [
                "skill://fm/acme/refunds/SKILL.md",
                "skill://fm/git-workflow/SKILL.md",
            ]
            for skill in listed:
                for item in skill.resources:  # type: ignore[union-attr]
                    read = await SkillsClient(client).read_skill_file(skill, item.uri)
                    original = item.uri.replace("skill://fm/", "skill://", 1)
                    assert read.verified and read.content == files[original]
            got = await SkillsClient(client).get_skill("skill://fm/git-workflow/SKILL.md")
            assert got.frontmatter.name == "git-workflow"

    run(scenario)
