"""Skills served from a folder the environment names (tests/server/test_skills_attacks.py).

    SNODO_SKILLS_ROOT=/path/to/skills SNODO_SKILLS_RELOAD=1 \
        snodo run tests/server/skills_root_server.py:server --transport http --port PORT

``SNODO_SKILLS_RELOAD=1`` reads a change under the folder again before the next skills
request; anything else serves the folder as it was at start.
"""

from __future__ import annotations

import os

from snodo.server import Server

server = Server("skills-root", "1.0.0")
server.skills(os.environ["SNODO_SKILLS_ROOT"], reload=os.environ.get("SNODO_SKILLS_RELOAD") == "1")
