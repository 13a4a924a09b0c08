"""A server mounting another whose skills come from ``server.skills`` (examples/skills)
and from code, under the prefix ``team``, for tests/gateway/test_skills.py:

    snodo run tests/gateway/skills_mount_server.py:main --transport http --port PORT
"""

from __future__ import annotations

from pathlib import Path

from snodo.gateway import mount
from snodo.server import Server

inner = Server("skills", "1.0.0")
inner.skills(Path(__file__).parents[2] / "examples" / "skills")


@inner.skill("reports/daily", description="Assemble today's report")
def daily() -> str:
    return "# Daily\n"


main = Server("main", "1.0.0")
mount(main, inner, prefix="team")
