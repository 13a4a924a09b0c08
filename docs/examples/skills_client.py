"""A host's side of skills: list a server's skills, read a skill's files verified
against its entry, refuse a file that changed, and the same skills mounted under a
prefix. python skills_client.py
"""

import asyncio
from pathlib import Path

from snodo import Client, Server
from snodo.client.transports import MemoryTransport
from snodo.extensions import skills
from snodo.extensions.skills import Skills, SkillsClient, VerificationFailed
from snodo.gateway import mount

folder = Path(__file__).parents[2] / "examples" / "skills"

server = Server("docs", "1.0.0")
served = Skills(server, folder)


@served.skill("team/notes", description="The team's running notes")
def team_notes() -> str:
    """Made by code on each read: its entry says "dynamic", with no digests."""
    return "Write down what changed today.\n"


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        host = SkillsClient(client)
        for skill in await host.list_skills():
            print(skill.uri, skill.frontmatter.name)
        refunds = await host.get_skill("skill://acme/billing/refunds/SKILL.md")
        email = await host.read_skill_file(refunds, "examples/email.md")
        print(email.uri, "verified" if email.verified else "unverified", len(email.content))
        # An entry that no longer describes the file (stale, or tampered with) is
        # refused, and the content is not returned.
        stale = refunds.model_dump(mode="json", by_alias=True)
        for item in stale["resources"]:
            item["digest"] = "sha256:" + "0" * 64
        try:
            await host.read_skill_file(stale, "examples/email.md")
        except VerificationFailed as refused:
            print("refused:", refused.uri)
        notes_skill = await host.get_skill("skill://team/notes/SKILL.md")
        made = await host.read_skill_file(notes_skill)
        print(made.uri, "verified" if made.verified else "unverified (dynamic)")

    main_server = Server("main", "1.0.0")
    mount(main_server, server, prefix="docs", passing=[skills.passed()])
    async with Client(MemoryTransport(main_server)) as client:
        host = SkillsClient(client)
        mounted = await host.get_skill("skill://docs/acme/billing/refunds/SKILL.md")
        read = await host.read_skill_file(mounted)
        print(read.uri, "verified" if read.verified else "unverified")


asyncio.run(main())
