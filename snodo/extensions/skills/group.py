"""The skills of a ``ClientGroup``'s servers, kept apart by server.

A skill's identity is the pair of the server's prefix (the group's own label for it,
never what the server calls itself) and the URI of its ``SKILL.md``, since two servers
may both serve ``skill://refunds/SKILL.md`` and those are unrelated skills.
``GroupSkills(group)`` holds the entries it listed or got under that pair, and reads a
skill's files only from the server it came from, verified against the held entry
(``snodo.extensions.skills.client``).
"""

from __future__ import annotations

from dataclasses import dataclass

from snodo.extensions.skills.client import SkillFile, SkillsClient
from snodo.gateway.group import ClientGroup
from snodo.revisions.skills import Skill

__all__ = ["GroupSkill", "GroupSkills"]


@dataclass(frozen=True, slots=True)
class GroupSkill:
    """A skill of one of the group's servers: ``server`` (its prefix) and ``skill`` (the
    entry). ``key``, the pair of the two, is the skill's identity."""

    server: str
    skill: Skill

    @property
    def key(self) -> tuple[str, str]:
        """``(server, uri)``: what the group holds the entry under."""
        return (self.server, self.skill.uri)


class GroupSkills:
    """The skills of ``group``'s servers (see the module docstring)."""

    def __init__(self, group: ClientGroup) -> None:
        self.group = group
        self.servers = {prefix: SkillsClient(client) for prefix, client in group.clients.items()}
        """Each server's skills, by prefix."""
        self.held: dict[tuple[str, str], Skill] = {}
        """The skill entries held, by (server prefix, SKILL.md URI)."""

    def _server(self, server: str) -> SkillsClient:
        self.group.client(server)  # ValueError naming the group's servers
        return self.servers[server]

    async def list_skills(self) -> list[GroupSkill]:
        """Every server's skills, each with the server it came from; the held entries
        become these (a server's skills no longer listed are let go)."""
        found: list[GroupSkill] = []
        for prefix, skills in self.servers.items():
            listed = await skills.list_skills()
            self.held = {key: held for key, held in self.held.items() if key[0] != prefix}
            for skill in listed:
                self.held[(prefix, skill.uri)] = skill
                found.append(GroupSkill(prefix, skill))
        return found

    async def get_skill(self, server: str, uri: str) -> GroupSkill:
        """The current entry of the skill at ``uri`` of ``server``, held from now on."""
        skill = await self._server(server).get_skill(uri)
        self.held[(server, uri)] = skill
        return GroupSkill(server, skill)

    async def read_skill_file(self, server: str, uri: str, path: str | None = None) -> SkillFile:
        """The file ``path`` (None: ``SKILL.md``) of the skill at ``uri`` of ``server``,
        read from that server alone and verified against the entry held for the pair
        (got first when none is held)."""
        held = self.held.get((server, uri))
        if held is None:
            held = (await self.get_skill(server, uri)).skill
        return await self._server(server).read_skill_file(held, path)
