"""examples/skills_server.py over real HTTP in both eras: the extension advertised in
``server/discover`` and in a legacy session's ``initialize`` answer, skills/list,
skills/get, resources/directory/read and resources/read answered alike, every listed
file read back with the digest and size its entry says."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from pathlib import Path
from typing import Any

import pytest

from snodo.client import Client, RequestError
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

TARGET = "examples/skills_server.py:server"
SKILLS = ROOT / "examples" / "skills"
EXTENSION = "io.modelcontextprotocol/skills"


def on_disk(uri: str) -> bytes:
    return (SKILLS / uri.removeprefix("skill://")).read_bytes()


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_skills_in_both_eras(era: str) -> None:
    seen: dict[str, Any] = {}

    async def scenario(url: str) -> None:
        async with Client.http(url, era=era) as client:
            assert await client.server_supports(EXTENSION)
            found = await client.discover()
            extensions: Any = found.capabilities.extensions
            assert extensions[EXTENSION] == {"directoryRead": True}
            listed = await client.request("skills/list", {})
            seen["uris"] = [entry["uri"] for entry in listed["skills"]]
            for entry in listed["skills"]:
                got = await client.request("skills/get", {"uri": entry["uri"]})
                assert got["skill"] == entry
                if entry["resources"] == "dynamic":
                    continue
                for item in entry["resources"]:
                    read = await client.request("resources/read", {"uri": item["uri"]})
                    (contents,) = read["contents"]
                    data = (
                        contents["text"].encode("utf-8")
                        if "text" in contents
                        else base64.b64decode(contents["blob"])
                    )
                    assert data == on_disk(item["uri"])
                    assert item["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
                    assert item["size"] == len(data)
            folder = await client.request(
                "resources/directory/read", {"uri": "skill://pdf-processing/templates"}
            )
            seen["children"] = [(r["name"], r["mimeType"]) for r in folder["resources"]]
            with pytest.raises(RequestError) as unknown:
                await client.request(
                    "skills/get", {"uri": "skill://acme/billing/chargebacks/SKILL.md"}
                )
            assert unknown.value.code == -32602

    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 60))
    assert seen["uris"] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
        "skill://reports/daily/SKILL.md",
    ]
    assert seen["children"] == [
        ("invoice.md", "text/markdown"),
        ("regional", "inode/directory"),
    ]


def test_the_example_folder_is_what_the_guide_describes() -> None:
    skills = sorted(p.parent.relative_to(SKILLS).as_posix() for p in SKILLS.rglob("SKILL.md"))
    assert skills == ["acme/billing/refunds", "git-workflow", "pdf-processing"]
    assert Path(ROOT / "docs" / "skills.md").read_text(encoding="utf-8").count("SKILL.md") > 3
