"""The Skills extension served from folders and from code, in process: the listing's
entries against the files on disk (frontmatter as written, digests and sizes of the
raw bytes), skills/get, directory reads, the start-up refusals, and reload."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snodo.core.caching import CacheHint
from snodo.extensions.skills import Skills
from snodo.extensions.skills.files import MAX_FILES, MAX_TOTAL_BYTES, SkillError, directories
from snodo.server import Limits, Server
from snodo_wire_skills import GetSkillResult, ListSkillsResult, ReadResourceDirectoryResult

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def skill_md(name: str, description: str = "Does a thing", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write(
        root,
        "git-workflow/SKILL.md",
        skill_md(
            "git-workflow", extra='license: MIT\nmetadata:\n  v: "2"\n  reviewed: 2026-01-02\n'
        ),
    )
    write(root, "acme/billing/refunds/SKILL.md", skill_md("refunds"))
    write(root, "acme/billing/refunds/examples/email.md", "Dear customer,\n")
    write(root, "acme/billing/refunds/logo.png", PNG)
    write(root, "acme/billing/refunds/late/SKILL.md", skill_md("late", "Nested one"))
    write(root, "acme/billing/refunds/.secret", "not served")
    return root


def call(server: Server, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {})}}
    message["params"]["_meta"] = META
    reply = asyncio.run(server.handle(message))
    assert reply.response is not None
    response: dict[str, Any] = reply.response
    return response


def result(server: Server, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    response = call(server, method, params)
    assert "result" in response, response
    answer: dict[str, Any] = response["result"]
    return answer


def listing(server: Server) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = result(server, "skills/list", {"cursor": cursor} if cursor else {})
        ListSkillsResult.model_validate(page)
        entries += page["skills"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries


def read_bytes(server: Server, uri: str) -> tuple[bytes, str]:
    (contents,) = result(server, "resources/read", {"uri": uri})["contents"]
    if "text" in contents:
        return contents["text"].encode("utf-8"), contents["mimeType"]
    return base64.b64decode(contents["blob"]), contents["mimeType"]


def test_every_skill_folder_is_listed_with_its_manifest(tree: Path) -> None:
    server = Server("s", "1", limits=Limits(page_size=1))
    Skills(server, tree)
    entries = listing(server)
    assert [e["uri"] for e in entries] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/late/SKILL.md",
        "skill://git-workflow/SKILL.md",
    ]
    git = entries[2]
    # Verbatim: every field the author wrote, the date as the string written.
    assert git["frontmatter"] == {
        "name": "git-workflow",
        "description": "Does a thing",
        "license": "MIT",
        "metadata": {"v": "2", "reviewed": "2026-01-02"},
    }
    refunds = entries[0]
    files = {
        "skill://acme/billing/refunds/SKILL.md": "acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/examples/email.md": "acme/billing/refunds/examples/email.md",
        "skill://acme/billing/refunds/late/SKILL.md": "acme/billing/refunds/late/SKILL.md",
        "skill://acme/billing/refunds/logo.png": "acme/billing/refunds/logo.png",
    }
    assert refunds["resources"][0]["uri"] == refunds["uri"]  # SKILL.md first
    assert {r["uri"] for r in refunds["resources"]} == set(files)  # the nested skill's too
    for item in refunds["resources"]:
        raw = (tree / files[item["uri"]]).read_bytes()
        assert item["digest"] == "sha256:" + hashlib.sha256(raw).hexdigest()
        assert item["size"] == len(raw)
        served, _ = read_bytes(server, item["uri"])
        assert served == raw


def test_files_are_typed_and_read_as_text_or_blob(tree: Path) -> None:
    server = Server("s", "1")
    Skills(server, tree)
    assert read_bytes(server, "skill://acme/billing/refunds/logo.png") == (PNG, "image/png")
    text, kind = read_bytes(server, "skill://git-workflow/SKILL.md")
    assert kind == "text/markdown" and text.startswith(b"---\nname: git-workflow")
    listed = {r["uri"]: r for r in result(server, "resources/list")["resources"]}
    assert listed["skill://git-workflow/SKILL.md"]["name"] == "git-workflow"
    assert listed["skill://git-workflow/SKILL.md"]["description"] == "Does a thing"
    assert "skill://acme/billing/refunds/.secret" not in listed
    caps = server.capabilities()
    assert caps["extensions"]["io.modelcontextprotocol/skills"] == {"directoryRead": True}
    assert "resources" in caps


def test_skills_get_answers_for_a_served_skill_only(tree: Path) -> None:
    server = Server("s", "1")
    Skills(server, tree, cache=CacheHint(300_000, "public"))
    got = result(server, "skills/get", {"uri": "skill://git-workflow/SKILL.md"})
    GetSkillResult.model_validate(got)
    assert got["skill"] == next(e for e in listing(server) if e["uri"] == got["skill"]["uri"])
    assert (got["ttlMs"], got["cacheScope"]) == (300_000, "public")
    for uri in ("skill://nope/SKILL.md", "skill://acme/billing/refunds/logo.png"):
        error = call(server, "skills/get", {"uri": uri})["error"]
        assert error["code"] == -32602 and uri in error["message"]
    assert call(server, "skills/get", {})["error"]["code"] == -32602


def test_directories_list_their_direct_children(tree: Path) -> None:
    server = Server("s", "1", limits=Limits(page_size=2))
    Skills(server, tree)

    def children(uri: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            params = {"uri": uri, **({"cursor": cursor} if cursor else {})}
            page = result(server, "resources/directory/read", params)
            ReadResourceDirectoryResult.model_validate(page)
            found += page["resources"]
            cursor = page.get("nextCursor")
            if cursor is None:
                return found

    root = children("skill://acme/billing/refunds")
    assert [(c["uri"].rsplit("/", 1)[-1], c["mimeType"]) for c in root] == [
        ("SKILL.md", "text/markdown"),
        ("examples", "inode/directory"),
        ("late", "inode/directory"),
        ("logo.png", "image/png"),
    ]
    assert root[3]["size"] == len(PNG)
    assert [c["name"] for c in children("skill://acme")] == ["billing"]
    for uri, said in (
        ("skill://acme/billing/refunds/SKILL.md", "is not a directory resource"),
        ("skill://acme/nothing", "No directory resource"),
    ):
        error = call(server, "resources/directory/read", {"uri": uri})["error"]
        assert error["code"] == -32602 and said in error["message"]


def test_without_directory_read_the_method_is_not_served(tree: Path) -> None:
    server = Server("s", "1")
    Skills(server, tree, directory_read=False)
    assert server.capabilities()["extensions"]["io.modelcontextprotocol/skills"] == {}
    error = call(server, "resources/directory/read", {"uri": "skill://acme"})["error"]
    assert error["code"] == -32601


@pytest.mark.parametrize(
    ("folder", "text", "said"),
    [
        ("git-flow", skill_md("git-workflow"), "must equal the folder's name 'git-flow'"),
        ("Git-Flow", skill_md("Git-Flow"), "breaks the Agent Skills rules"),
        ("a--b", skill_md("a--b"), "breaks the Agent Skills rules"),
        ("plain", "# no frontmatter\n", "must begin with YAML frontmatter"),
        ("open", "---\nname: open\n", "no closing --- line"),
        ("quiet", "---\nname: quiet\n---\n", "needs a description"),
        ("listy", "---\n- a\n---\n", "must be a mapping"),
        (
            "bomb",
            "---\nname: bomb\ndescription: d\na: &a [x,x,x,x,x,x,x,x]\n"
            + "".join(
                f"{n}: &{n} [{','.join([f'*{p}'] * 8)}]\n"
                for p, n in zip("abcdefg", "bcdefgh", strict=True)
            )
            + "---\n",
            "aliases expand it past",
        ),
        ("huge", "---\nname: huge\ndescription: " + "d" * 70_000 + "\n---\n", "65536 bytes"),
        ("nested", "---\nname: nested\nx: " + "[" * 3000 + "]" * 3000 + "\n---\n", "nests"),
    ],
)
def test_a_broken_skill_stops_start_up_naming_its_folder(
    tmp_path: Path, folder: str, text: str, said: str
) -> None:
    write(tmp_path, "ok/SKILL.md", skill_md("ok"))
    write(tmp_path, f"team/{folder}/SKILL.md", text)
    with pytest.raises(SkillError) as refused:
        Skills(Server("s", "1"), tmp_path)
    assert str(tmp_path / "team" / folder) in str(refused.value)
    assert said in str(refused.value)


def test_the_per_skill_limits_are_enforced_at_start(tmp_path: Path) -> None:
    many = tmp_path / "many"
    write(many, "wide/SKILL.md", skill_md("wide"))
    for number in range(MAX_FILES - 1):
        write(many, f"wide/files/{number}.txt", "x")
    Skills(Server("s", "1"), many)  # 512 files, SKILL.md included: at the limit
    write(many, "wide/files/one-more.txt", "x")
    with pytest.raises(SkillError, match=r"513 files .* at most 512 files"):
        Skills(Server("s", "1"), many)
    big = tmp_path / "big"
    write(big, "heavy/SKILL.md", skill_md("heavy"))
    used = len((big / "heavy/SKILL.md").read_bytes())
    with (big / "heavy/data.bin").open("wb") as f:
        f.truncate(MAX_TOTAL_BYTES - used)
    Skills(Server("s", "1"), big)  # 16 MiB exactly
    write(big, "heavy/more.txt", "x")
    with pytest.raises(SkillError, match="16 MiB"):
        Skills(Server("s", "1"), big)


def test_a_root_without_skills_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "docs/README.md", "# not a skill\n")
    with pytest.raises(SkillError, match=r"no folder under it holds a SKILL\.md"):
        Skills(Server("s", "1"), tmp_path)
    with pytest.raises(SkillError, match="not a folder of skills"):
        Skills(Server("s", "1"), tmp_path / "missing")


def test_a_link_out_of_the_root_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path, "private/key.txt", "secret")
    root = tmp_path / "skills"
    write(root, "leaky/SKILL.md", skill_md("leaky"))
    os.symlink(outside, root / "leaky" / "key.txt")
    with pytest.raises(SkillError, match="links out of the skills root"):
        Skills(Server("s", "1"), root)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_not_a_file_of_a_skill(tmp_path: Path) -> None:
    write(tmp_path, "piped/SKILL.md", skill_md("piped"))
    os.mkfifo(tmp_path / "piped" / "pipe.txt")
    server = Server("s", "1")
    Skills(server, tmp_path)  # a FIFO beside the files: not one of them, never opened
    assert [r["uri"] for r in listing(server)[0]["resources"]] == ["skill://piped/SKILL.md"]
    (tmp_path / "piped" / "SKILL.md").unlink()
    os.mkfifo(tmp_path / "piped" / "SKILL.md")
    with pytest.raises(SkillError, match=r"SKILL\.md is not a regular file"):
        Skills(Server("s", "1"), tmp_path)


def test_a_root_that_is_a_skill_is_served_under_its_name(tmp_path: Path) -> None:
    write(tmp_path, "solo/SKILL.md", skill_md("solo"))
    server = Server("s", "1")
    Skills(server, [tmp_path / "solo"])
    assert [e["uri"] for e in listing(server)] == ["skill://solo/SKILL.md"]
    twice = Server("s", "1")
    with pytest.raises(SkillError, match="already"):
        Skills(twice, [tmp_path / "solo", tmp_path])


def test_a_skill_made_by_code_is_dynamic(tmp_path: Path) -> None:
    import yaml

    server = Server("s", "1")
    skills = Skills(server)
    served = iter(["# First\n", "# Second\n"])

    @skills.skill("reports/daily", description="Today's report", frontmatter={"license": "MIT"})
    async def daily() -> str:
        return next(served)

    (entry,) = listing(server)
    assert entry == {
        "uri": "skill://reports/daily/SKILL.md",
        "frontmatter": {"name": "daily", "license": "MIT", "description": "Today's report"},
        "resources": "dynamic",
    }
    first, kind = read_bytes(server, entry["uri"])
    second, _ = read_bytes(server, entry["uri"])
    assert kind == "text/markdown" and first != second
    head = first.decode().split("---\n")[1]
    assert yaml.safe_load(head) == entry["frontmatter"]
    assert first.decode().endswith("# First\n")
    folder = {"uri": "skill://reports/daily"}
    (child,) = result(server, "resources/directory/read", folder)["resources"]
    assert (child["uri"], child["name"]) == (entry["uri"], "daily")  # its resource metadata
    with pytest.raises(SkillError, match="Agent Skills rules"):
        skills.skill("reports/Weekly", description="x")(lambda: "")
    with pytest.raises(SkillError, match="URI-safe"):
        skills.skill("my reports/weekly", description="x")(lambda: "")
    with pytest.raises(SkillError, match="served already"):
        skills.skill("reports/daily", description="again")(lambda: "")


def test_a_file_name_is_percent_encoded_in_its_uri(tmp_path: Path) -> None:
    write(tmp_path, "notes/SKILL.md", skill_md("notes"))
    raw = write(tmp_path, "notes/meeting notes.md", "# Monday\n").read_bytes()
    server = Server("s", "1")
    Skills(server, tmp_path)
    (entry,) = listing(server)
    uris = [r["uri"] for r in entry["resources"]]
    assert uris == ["skill://notes/SKILL.md", "skill://notes/meeting%20notes.md"]
    assert read_bytes(server, uris[1]) == (raw, "text/markdown")


def test_reload_reads_a_changed_folder_again(tree: Path) -> None:
    server = Server("s", "1")
    Skills(server, tree, reload=True)
    before = {e["uri"]: e for e in listing(server)}
    email = tree / "acme/billing/refunds/examples/email.md"
    email.write_text("Dear customer, a longer text now.\n", encoding="utf-8")
    write(tree, "fresh/SKILL.md", skill_md("fresh"))
    after = {e["uri"]: e for e in listing(server)}
    assert set(after) == {*before, "skill://fresh/SKILL.md"}
    sizes = {
        r["uri"]: r["size"] for r in after["skill://acme/billing/refunds/SKILL.md"]["resources"]
    }
    assert sizes["skill://acme/billing/refunds/examples/email.md"] == len(email.read_bytes())
    assert read_bytes(server, "skill://fresh/SKILL.md")[0] == (tree / "fresh/SKILL.md").read_bytes()
    # A change that breaks a skill keeps the previous ones served.
    write(tree, "fresh/SKILL.md", "# frontmatter gone\n")
    assert {e["uri"] for e in listing(server)} == set(after)
    (tree / "fresh/SKILL.md").unlink()
    (tree / "fresh").rmdir()
    assert {e["uri"] for e in listing(server)} == set(before)
    error = call(server, "resources/read", {"uri": "skill://fresh/SKILL.md"})["error"]
    assert error["code"] == -32602


def test_without_reload_the_listing_stays_as_it_started(tree: Path) -> None:
    server = Server("s", "1")
    Skills(server, tree)
    before = listing(server)
    write(tree, "fresh/SKILL.md", skill_md("fresh"))
    assert listing(server) == before


SEGMENT = st.text(alphabet="abc-.", min_size=1, max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.lists(SEGMENT, min_size=1, max_size=4).map("/".join), min_size=1, max_size=12))
def test_directories_hold_each_file_once_under_its_parent(paths: set[str]) -> None:
    """Whatever the files, every one is the direct child of exactly one directory, a
    directory child is itself a directory holding something, and nothing is both."""
    files = {f"skill://root/{p}" for p in paths}
    if any(f.startswith(other + "/") for f in files for other in files):
        return  # a file cannot also be a folder
    tree = directories(files)
    leaves = [child for children in tree.values() for child, file in children.items() if file]
    assert sorted(leaves) == sorted(files)
    for folder, children in tree.items():
        for child, file in children.items():
            assert child.rpartition("/")[0] == folder
            assert (file is None) == (child in tree)
