"""The Skills extension (``EXTENSION_ID``): folders of instructions a server publishes
over its resources, each file verified by the host against its skill's entry.

Its server half (``server``, with ``files`` reading and checking skill folders, each
file read through ``reading``: no link followed, regular files only, bounded):
``skills = Skills(server, "skills/")`` and ``@skills.skill(path, description=...)``.
Its client half (``client``): ``SkillsClient(client)`` lists, gets and reads skills,
refusing a file that is not what its entry says (``VerificationFailed``); both halves
parse a ``SKILL.md``'s frontmatter within ``frontmatter``'s bounds; ``group``:
the skills of a ``ClientGroup``'s servers, kept apart by server. Its gateway half
(``gateway``): ``passed()``, a server's skills passed on by a proxy or a mount, their
``skill://`` URIs prefixed by the member's prefix.
"""

from snodo.extensions.skills.client import SkillFile, SkillsClient, VerificationFailed
from snodo.extensions.skills.files import SkillError
from snodo.extensions.skills.gateway import SkillsPassing
from snodo.extensions.skills.group import GroupSkill, GroupSkills
from snodo.extensions.skills.server import EXTENSION_ID, Skills

__all__ = [
    "EXTENSION_ID",
    "GroupSkill",
    "GroupSkills",
    "SkillError",
    "SkillFile",
    "Skills",
    "SkillsClient",
    "SkillsPassing",
    "VerificationFailed",
    "passed",
]


def passed() -> SkillsPassing:
    """Skills at a gateway's front (``proxy(connect, passing=[skills.passed()])``):
    offered as the servers behind declare them, a mounted member's under its prefix."""
    return SkillsPassing()
