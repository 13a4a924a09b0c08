"""Skills served from a folder the environment names (tests/extensions/skills/test_attacks.py).

    SNODO_SKILLS_ROOT=/path/to/skills SNODO_SKILLS_RELOAD=1 \
        snodo run tests/extensions/skills/root_server.py:server --transport http --port PORT

``SNODO_SKILLS_RELOAD=1`` reads a change under the folder again before the next skills
request; anything else serves the folder as it was at start.
"""

from __future__ import annotations

import os

from snodo.extensions.skills import Skills
from snodo.server import Server

server = Server("skills-root", "1.0.0")
Skills(server, os.environ["SNODO_SKILLS_ROOT"], reload=os.environ.get("SNODO_SKILLS_RELOAD") == "1")
