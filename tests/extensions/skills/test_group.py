"""``GroupSkills`` keeps a ``ClientGroup``'s skills per server: two servers serving the
same skill URI with different content are two skills, each held under (server, URI),
each read only from its own server and verified against its own entry."""

from __future__ import annotations

import asyncio

import pytest

from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.extensions.skills import GroupSkills, VerificationFailed
from snodo.gateway import ClientGroup
from tests.extensions.skills.handmade_server import SkillsServer, skill_md, skills_server

REFUNDS = "skill://refunds/SKILL.md"
NOTES = "skill://refunds/notes.md"


def _server(description: str, notes: bytes) -> SkillsServer:
    return skills_server({REFUNDS: skill_md("refunds", description), NOTES: notes})


def _client(state: SkillsServer) -> Client:
    assert state.server is not None
    return Client(MemoryTransport(state.server))


def test_the_same_uri_at_two_servers_is_two_skills() -> None:
    billing = _server("Refunds the billing way", b"billing notes\n")
    support = _server("Refunds the support way", b"support notes, longer\n")

    async def scenario() -> None:
        async with ClientGroup(
            {"billing": _client(billing), "support team": _client(support)}
        ) as group:
            skills = GroupSkills(group)
            listed = await skills.list_skills()
            assert [(s.server, s.skill.uri) for s in listed] == [
                ("billing", REFUNDS),
                ("support-team", REFUNDS),
            ]
            assert [s.skill.frontmatter.description for s in listed] == [
                "Refunds the billing way",
                "Refunds the support way",
            ]
            assert set(skills.held) == {("billing", REFUNDS), ("support-team", REFUNDS)}
            billing_notes = await skills.read_skill_file("billing", REFUNDS, "notes.md")
            support_notes = await skills.read_skill_file("support-team", REFUNDS, "notes.md")
            assert billing_notes.content == b"billing notes\n"
            assert support_notes.content == b"support notes, longer\n"
            assert billing.reads == [NOTES] and support.reads == [NOTES]
            # One server's file changed: only its own held entry fails, and a get renews it.
            billing.files[NOTES] = b"billing notes, changed\n"
            with pytest.raises(VerificationFailed):
                await skills.read_skill_file("billing", REFUNDS, "notes.md")
            assert (await skills.read_skill_file("support-team", REFUNDS, "notes.md")).verified
            await skills.get_skill("billing", REFUNDS)
            read = await skills.read_skill_file("billing", REFUNDS, "notes.md")
            assert read.content == b"billing notes, changed\n"
            with pytest.raises(ValueError, match="no server of this group"):
                await skills.read_skill_file("nobody", REFUNDS)

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_skill_not_listed_is_got_from_its_server_before_it_is_read() -> None:
    billing = _server("Refunds", b"notes\n")

    async def scenario() -> None:
        async with ClientGroup({"billing": _client(billing)}) as group:
            skills = GroupSkills(group)
            read = await skills.read_skill_file("billing", REFUNDS)
            assert read.verified and read.uri == REFUNDS
            assert billing.asked == ["skills/get"]
            assert ("billing", REFUNDS) in skills.held

    asyncio.run(asyncio.wait_for(scenario(), 60))
