"""A FastMCP 4.2.3 server publishing a folder of skills through its
``SkillsDirectoryProvider`` (the Skills extension: ``skills/list``, ``skills/get``, each
file a resource), over Streamable HTTP at ``/mcp``, for
tests/interop/test_fastmcp_skills.py. It runs under FastMCP's own interpreter
(``tests.support.fastmcp``), never snodo's:

    .venv-fastmcp/bin/python tests/interop/fastmcp_skills_server.py ROOT PORT

The folder is read again on every request, so a file a test changes after listing is
served changed, as a server whose skill was updated (or tampered with) would serve it.
"""

import sys

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

if __name__ == "__main__":
    root, port = sys.argv[1], int(sys.argv[2])
    server = FastMCP("fastmcp-skills")
    server.add_provider(SkillsDirectoryProvider(root, reload=True))
    server.run(transport="http", host="127.0.0.1", port=port, show_banner=False)
