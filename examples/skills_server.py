"""Skills served from a folder, and one made by code.

Run it with ``snodo run examples/skills_server.py --transport http``; a client lists the
skills with ``skills/list`` and reads their files with ``resources/read``.
"""

from datetime import date
from pathlib import Path

from snodo.extensions.skills import Skills
from snodo.server import Server

server = Server("skills-demo", "1.0.0", instructions="Skills: see skills/list.")

# Every folder under examples/skills/ holding a SKILL.md is a skill.
skills = Skills(server, Path(__file__).parent / "skills")


@skills.skill("reports/daily", description="Assemble today's operational report")
def daily() -> str:
    """Written on each read: its entry's resources are "dynamic"."""
    return f"# Daily report for {date.today().isoformat()}\n\nList the open incidents first.\n"
