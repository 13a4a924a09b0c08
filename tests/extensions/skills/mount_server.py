"""A server mounting another whose skills come from ``Skills`` (examples/skills) and
from code, under the prefix ``team``, for tests/extensions/skills/test_gateway.py:

    snodo run tests/extensions/skills/mount_server.py:main --transport http --port PORT
"""

from __future__ import annotations

from pathlib import Path

from snodo.extensions import skills
from snodo.extensions.skills import Skills
from snodo.gateway import mount
from snodo.server import Server

inner = Server("skills", "1.0.0")
served = Skills(inner, Path(__file__).parents[3] / "examples" / "skills")


@served.skill("reports/daily", description="Assemble today's report")
def daily() -> str:
    return "# Daily\n"


main = Server("main", "1.0.0")
mount(main, inner, prefix="team", passing=[skills.passed()])
