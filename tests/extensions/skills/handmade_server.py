"""A skills server built by hand from the extension API, whose files and entries a test
can change between a listing and a read: a server that changes its skills, or lies
about them. ``skills_server(files)`` serves ``files`` (URI -> bytes) as resources and
one entry per ``SKILL.md`` among them, two entries a page; ``entries`` overrides what
the entry of a URI says (the keys given replace the computed ones).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from snodo import Caching, Context, Server
from snodo.core.caching import CacheHint
from snodo.core.errors import InvalidParams
from snodo.server.extensions import Extension, ExtensionMethod

SKILLS = "io.modelcontextprotocol/skills"


class _Page(BaseModel):
    cursor: str | None = None


class _Uri(BaseModel):
    uri: str


def digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def skill_md(name: str, description: str, extra: str = "") -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n".encode()


@dataclass
class SkillsServer:
    """The server, and what it serves (changed in place by the tests)."""

    files: dict[str, bytes]
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    server: Server | None = None

    def entry(self, uri: str) -> dict[str, Any]:
        root = uri.removesuffix("/SKILL.md")
        text = self.files[uri].decode()
        fields = dict(
            line.split(": ", 1)
            for line in text.split("---")[1].strip().splitlines()
            if ": " in line
        )
        computed: dict[str, Any] = {
            "uri": uri,
            "frontmatter": fields,
            "resources": [
                {"uri": u, "digest": digest(c), "size": len(c)}
                for u, c in sorted(self.files.items())
                if u.startswith(root + "/")
            ],
        }
        return {**computed, **self.entries.get(uri, {})}

    def skill_uris(self) -> list[str]:
        return sorted(u for u in self.files if u.endswith("/SKILL.md"))


def skills_server(
    files: Mapping[str, bytes],
    *,
    declare: bool = True,
    read_ttl_ms: int = 0,
    directory_read: bool = False,
) -> SkillsServer:
    state = SkillsServer(dict(files))
    extension = Extension(SKILLS, {"directoryRead": True} if directory_read else {})

    @extension.method("skills/list", params=_Page)
    def list_skills(ctx: Context, params: _Page) -> dict[str, Any]:
        state.asked.append("skills/list")
        uris = state.skill_uris()
        start = int(params.cursor or 0)
        page: dict[str, Any] = {
            "skills": [state.entry(u) for u in uris[start : start + 2]],
            "ttlMs": 0,
            "cacheScope": "private",
        }
        if start + 2 < len(uris):
            page["nextCursor"] = str(start + 2)
        return page

    @extension.method("skills/get", params=_Uri)
    def get_skill(ctx: Context, params: _Uri) -> dict[str, Any]:
        state.asked.append("skills/get")
        if params.uri not in state.skill_uris():
            raise InvalidParams(f"No skill is served at {params.uri}")
        return {"skill": state.entry(params.uri), "ttlMs": 0, "cacheScope": "private"}

    def read_directory(ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        uri = str(params.get("uri"))
        below = [u for u in state.files if u.startswith(uri + "/")]
        if not below:
            raise InvalidParams(f"{uri} is not a directory resource")
        children: dict[str, dict[str, Any]] = {}
        for u in below:
            head, slash, _ = u[len(uri) + 1 :].partition("/")
            child = f"{uri}/{head}"
            kind = "inode/directory" if slash else "text/plain"
            children[child] = {"uri": child, "name": head, "mimeType": kind}
        return {"resources": sorted(children.values(), key=lambda r: r["uri"])}

    if directory_read:
        extension.methods["resources/directory/read"] = ExtensionMethod(
            "resources/directory/read", None, read_directory
        )
    server = Server(
        "skills-test",
        "1.0.0",
        extensions=[extension] if declare else [],
        caching=Caching(read=CacheHint(read_ttl_ms)),
    )
    for uri in files:
        server.resource(uri, name=uri.rsplit("/", 1)[-1])(_reader(state, uri))
    state.server = server
    return state


def _reader(state: SkillsServer, uri: str) -> Any:
    def read() -> str | bytes:
        state.reads.append(uri)
        content = state.files[uri]
        if uri.endswith(".bin"):
            return content
        return content.decode("utf-8")

    return read


served = skills_server(
    {
        "skill://git-workflow/SKILL.md": skill_md("git-workflow", "Branch and commit"),
        "skill://acme/refunds/SKILL.md": skill_md("refunds", "Process refunds"),
        "skill://acme/refunds/examples/email.md": b"Dear customer,\n",
    }
)
server = served.server
"""``snodo list tests/extensions/skills/handmade_server.py:server`` lists these skills."""
