"""FastMCP's client against a skills server: ``python list_skills.py URL`` lists the
skills with ``SkillsClientExtension``, reads every static one with ``read_skill`` (which
checks each file's size and digest against the entry, and the frontmatter against
``SKILL.md``) and prints what it saw as one JSON object. Run with the FastMCP venv's
interpreter (tests/support/fastmcp.py)."""

import asyncio
import hashlib
import json
import sys

from fastmcp import Client
from fastmcp.skills import SkillsClientExtension


async def main(url: str) -> None:
    async with Client(url, extensions=[SkillsClientExtension()]) as client:
        entries = await client.list_skills()
        files: dict[str, dict[str, str]] = {}
        for entry in entries:
            if entry.resources == "dynamic":
                continue
            skill = await client.read_skill(entry.uri)
            files[entry.uri] = {
                path: hashlib.sha256(data).hexdigest() for path, data in skill.files.items()
            }
        seen = {
            "protocolVersion": client.protocol_version,
            "skills": [
                e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in entries
            ],
            "files": files,
        }
        print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
