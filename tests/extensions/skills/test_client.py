"""The client's side of the Skills extension: entries listed (every page, or one) and
got, checked as they arrive, and files read only when they are what the entry says.

The server (tests/extensions/skills/handmade_server.py) is built from the extension API, so a test
can change a file after the listing, or make an entry lie, the way a changed or
hostile server would."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.client import Client, ProtocolViolation, RequestError
from snodo.client.transports import MemoryTransport
from snodo.extensions.skills import SkillsClient, VerificationFailed
from snodo.extensions.skills.client import check_entry, file_uri, verified
from tests.extensions.skills.handmade_server import SkillsServer, digest, skill_md, skills_server

pytestmark = pytest.mark.anyio

GIT = "skill://git-workflow/SKILL.md"
REFUNDS = "skill://acme/billing/refunds/SKILL.md"
DAILY = "skill://reports/daily/SKILL.md"
EMAIL = "skill://acme/billing/refunds/examples/email.md"
LOGO = "skill://acme/billing/refunds/assets/logo.bin"
PNG = bytes(range(256)) * 3


def files() -> dict[str, bytes]:
    return {
        GIT: skill_md("git-workflow", "Branch and commit the team's way"),
        REFUNDS: skill_md("refunds", "Process refunds", "license: Apache-2.0\n"),
        EMAIL: b"Dear customer,\n",
        LOGO: PNG,
        DAILY: skill_md("daily", "Today's report"),
    }


def client(state: SkillsServer, **options: Any) -> Client:
    assert state.server is not None
    return Client(MemoryTransport(state.server), **options)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_list_skills_follows_every_page() -> None:
    state = skills_server(files())
    async with client(state) as c:
        host = SkillsClient(c)
        skills = await host.list_skills()
    assert [s.uri for s in skills] == [REFUNDS, GIT, DAILY]
    assert state.asked == ["skills/list", "skills/list"]  # two to a page
    refunds = skills[0]
    assert refunds.frontmatter.model_dump() == {
        "name": "refunds",
        "description": "Process refunds",
        "license": "Apache-2.0",
    }
    assert isinstance(refunds.resources, list)
    assert {r.uri for r in refunds.resources} == {REFUNDS, EMAIL, LOGO}


async def test_one_page_at_a_time_with_its_cursor() -> None:
    state = skills_server(files())
    async with client(state) as c:
        host = SkillsClient(c)
        first = await host.list_skills(page=True)
        assert len(first) == 2 and first.next_cursor is not None
        rest = await host.list_skills(cursor=first.next_cursor)
    assert [s.uri for s in rest] == [DAILY]
    assert rest.next_cursor is None


async def test_get_skill_and_an_unknown_uri() -> None:
    state = skills_server(files())
    async with client(state) as c:
        host = SkillsClient(c)
        entry = await host.get_skill(GIT)
        assert entry.uri == GIT
        with pytest.raises(RequestError) as refused:
            await host.get_skill("skill://nothing/SKILL.md")
    assert refused.value.code == -32602


async def test_a_server_without_the_extension_is_asked_nothing() -> None:
    state = skills_server(files(), declare=False)
    async with client(state) as c:
        host = SkillsClient(c)
        assert await host.list_skills() == []
        with pytest.raises(RequestError) as refused:
            await host.get_skill(GIT)
    assert refused.value.code == -32601
    assert state.asked == []


async def test_files_read_verified() -> None:
    state = skills_server(files())
    async with client(state) as c:
        host = SkillsClient(c)
        entry = await host.get_skill(REFUNDS)
        main = await host.read_skill_file(entry)
        email = await host.read_skill_file(entry, "examples/email.md")
        logo = await host.read_skill_file(entry, LOGO)
    assert main.uri == REFUNDS and main.verified
    assert main.text is not None and main.text.startswith("---\nname: refunds\n")
    assert email.content == b"Dear customer,\n"
    assert logo.content == PNG and logo.text is None


async def test_a_file_changed_after_the_listing_is_refused() -> None:
    state = skills_server(files())
    async with client(state) as c:
        host = SkillsClient(c)
        [entry] = [s for s in await host.list_skills() if s.uri == REFUNDS]
        state.files[EMAIL] = b"Dear customer, send us your password.\n"
        with pytest.raises(VerificationFailed) as refused:
            await host.read_skill_file(entry, "examples/email.md")
        assert refused.value.uri == EMAIL
        assert "bytes where the entry says 15" in refused.value.reason
        assert state.reads == [EMAIL]  # read from the server: not read again
        # The same size, other bytes: the digest tells.
        state.files[EMAIL] = b"Dear customer!\n"
        with pytest.raises(VerificationFailed, match="digest"):
            await host.read_skill_file(entry, "examples/email.md")
        # The current entry describes the current file.
        fresh = await host.get_skill(REFUNDS)
        read = await host.read_skill_file(fresh, "examples/email.md")
    assert read.content == b"Dear customer!\n"


async def test_an_unlisted_file_is_not_even_read() -> None:
    state = skills_server(files())
    async with client(state) as c:
        host = SkillsClient(c)
        entry = await host.get_skill(REFUNDS)
        with pytest.raises(VerificationFailed, match="does not list it"):
            await host.read_skill_file(entry, "examples/other.md")
    assert state.reads == []


async def test_a_skill_md_whose_frontmatter_is_not_the_entrys() -> None:
    state = skills_server(files())
    # The entry's digest is the file's, but it describes the skill otherwise.
    state.entries[GIT] = {
        "frontmatter": {"name": "git-workflow", "description": "Something harmless"}
    }
    async with client(state) as c:
        host = SkillsClient(c)
        entry = await host.get_skill(GIT)
        with pytest.raises(VerificationFailed, match="'description' differs"):
            await host.read_skill_file(entry)
    state.entries[GIT] = {"frontmatter": {"name": "git-workflow", "description": "Branch"}}
    state.files[GIT] = skill_md("git-workflow", "Branch", "allowed-tools: Bash\n")
    async with client(state) as c:
        host = SkillsClient(c)
        entry = await host.get_skill(GIT)  # digests of the new file, frontmatter without a field
        with pytest.raises(VerificationFailed, match="'allowed-tools' differs"):
            await host.read_skill_file(entry)


async def test_a_kept_read_that_is_stale_is_read_again_once() -> None:
    state = skills_server(files(), read_ttl_ms=600_000)
    async with client(state) as c:
        host = SkillsClient(c)
        entry = await host.get_skill(REFUNDS)
        await host.read_skill_file(entry, "examples/email.md")
        state.files[EMAIL] = b"A new letter.\n"
        fresh = await host.get_skill(REFUNDS)
        read = await host.read_skill_file(fresh, "examples/email.md")
        assert read.content == b"A new letter.\n"
        assert state.reads == [EMAIL, EMAIL]  # the kept copy failed; the server's passed
        # The kept copy that matches the entry is served as it is.
        state.files[EMAIL] = b"Changed again.\n"
        again = await host.read_skill_file(fresh, "examples/email.md")
    assert again.content == b"A new letter.\n"
    assert state.reads == [EMAIL, EMAIL]


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"uri": "skill://git-workflow/README.md"}, "not the URI of a SKILL.md"),
        ({"uri": "skill://other-name/SKILL.md"}, "is not its name"),
        ({"resources": None}, "neither a list nor 'dynamic'"),
        ({"resources": "static"}, "neither a list nor 'dynamic'"),
        ({"resources": []}, "leave out its SKILL.md"),
        ({"frontmatter": {"name": "git-workflow"}}, "no description"),
    ],
)
def test_entries_that_may_not_be_loaded(change: dict[str, Any], complaint: str) -> None:
    state = skills_server(files())
    entry = {**state.entry(GIT), **change}
    with pytest.raises(ProtocolViolation, match=complaint):
        check_entry(entry)


def test_resources_outside_the_skill_or_malformed() -> None:
    state = skills_server(files())
    base = state.entry(REFUNDS)
    one = {**base["resources"][0], "uri": EMAIL}  # the SKILL.md record stays
    base = {**base, "resources": [one, *[r for r in base["resources"] if r["uri"] != EMAIL]]}
    bad = [
        ({**one, "uri": "skill://acme/billing/other/x.md"}, "outside the skill"),
        ({**one, "uri": "skill://acme/billing/refundsX/x.md"}, "outside the skill"),
        ({**one, "digest": "sha256:ABC"}, "no sha256: digest"),
        ({**one, "digest": "md5:" + "0" * 32}, "no sha256: digest"),
        ({**one, "size": -1}, "no size"),
        ({**one, "size": True}, "no size"),
    ]
    for item, complaint in bad:
        with pytest.raises(ProtocolViolation, match=complaint):
            check_entry({**base, "resources": [item, *base["resources"][1:]]})
    with pytest.raises(ProtocolViolation, match="twice"):
        check_entry({**base, "resources": [*base["resources"], base["resources"][1]]})


@pytest.mark.invalid_answers  # the server answers an entry no schema allows, on purpose
async def test_a_listing_with_an_invalid_entry_is_refused() -> None:
    state = skills_server(files())
    state.entries[DAILY] = {"resources": "sometimes"}
    async with client(state) as c:
        host = SkillsClient(c)
        with pytest.raises(ProtocolViolation, match="neither a list nor 'dynamic'"):
            await host.list_skills()


async def test_a_dynamic_skill_is_read_unverified_but_its_frontmatter_is_checked() -> None:
    state = skills_server(files())
    state.entries[DAILY] = {"resources": "dynamic"}
    async with client(state) as c:
        host = SkillsClient(c)
        entry = await host.get_skill(DAILY)
        read = await host.read_skill_file(entry)
        assert not read.verified
        with pytest.raises(VerificationFailed, match="not a file of the skill"):
            await host.read_skill_file(entry, GIT)
        state.entries[DAILY] = {
            "resources": "dynamic",
            "frontmatter": {"name": "daily", "description": "Yesterday's report"},
        }
        entry = await host.get_skill(DAILY)
        with pytest.raises(VerificationFailed, match="'description' differs"):
            await host.read_skill_file(entry)


def test_file_uris_resolve_against_the_skill_root() -> None:
    entry = {"uri": REFUNDS}
    assert file_uri(entry) == REFUNDS
    assert file_uri(entry, "examples/email.md") == EMAIL
    assert file_uri(entry, LOGO) == LOGO
    for escaping in ("../other/SKILL.md", "examples/../../x", "", "a//b"):
        with pytest.raises(ValueError, match="not a file path within the skill"):
            file_uri(entry, escaping)


def _entry_for(content: bytes) -> dict[str, Any]:
    return {
        "uri": "skill://s/SKILL.md",
        "frontmatter": {"name": "s", "description": "d"},
        "resources": [{"uri": "skill://s/f", "digest": digest(content), "size": len(content)}],
    }


@given(st.binary(max_size=300), st.data())
def test_only_the_described_bytes_pass(content: bytes, data: st.DataObject) -> None:
    entry = _entry_for(content)
    assert verified(entry, "skill://s/f", content)
    other = data.draw(st.binary(max_size=300).filter(lambda b: b != content))
    with pytest.raises(VerificationFailed):
        verified(entry, "skill://s/f", other)


def test_frontmatter_scalars_typed_or_as_written() -> None:
    content = b"---\nname: s\ndescription: d\nversion: 1.10\nwhen: 2026-01-02\n---\nbody\n"
    entry = {
        "uri": "skill://s/SKILL.md",
        "frontmatter": {"name": "s", "description": "d", "version": 1.1, "when": "2026-01-02"},
        "resources": [
            {"uri": "skill://s/SKILL.md", "digest": digest(content), "size": len(content)}
        ],
    }
    assert verified(entry, "skill://s/SKILL.md", content)
    as_written = {**entry, "frontmatter": {**entry["frontmatter"], "version": "1.10"}}
    assert verified(as_written, "skill://s/SKILL.md", content)
    wrong = {**entry, "frontmatter": {**entry["frontmatter"], "version": 1.2}}
    with pytest.raises(VerificationFailed, match="'version' differs"):
        verified(wrong, "skill://s/SKILL.md", content)


def test_a_blob_is_its_decoded_bytes() -> None:
    from snodo.extensions.skills.client import content_bytes

    raw = hashlib.sha256(b"x").digest()
    blob = [{"uri": "skill://s/f", "blob": base64.b64encode(raw).decode()}]
    assert content_bytes(blob, "skill://s/f") == (raw, None)
    with pytest.raises(ProtocolViolation, match="not base64"):
        content_bytes([{"uri": "skill://s/f", "blob": "%%%"}], "skill://s/f")
    with pytest.raises(ProtocolViolation, match="0 contents"):
        content_bytes([{"uri": "skill://s/g", "text": ""}], "skill://s/f")


@pytest.mark.parametrize(
    "escaping",
    [
        "skill://acme/billing/refunds/../../secrets/key.md",
        "skill://acme/billing/refunds/%2e%2e/%2e%2e/secrets/key.md",
        "skill://acme/billing/refunds/%2E%2e/x.md",
        "skill://acme/billing/refunds/%252e%252e/x.md",
        "skill://acme/billing/refunds/./x.md",
        "skill://acme/billing/refunds/%2e/x.md",
        "skill://acme/billing/refunds/a//x.md",
        "skill://acme/billing/refunds/..%2fx.md",
        "skill://acme/billing/refunds/..%5cx.md",
        "skill://acme/billing/refunds/x%00.md",
    ],
)
async def test_an_entry_listing_a_file_through_dot_segments_is_refused(escaping: str) -> None:
    """A manifest entry that climbs out of the skill once its segments are decoded (as a
    host writing the files to disk would decode them) is not loaded: the listing that
    carries it is refused, and so is the entry given back to ``read_skill_file``."""
    state = skills_server(files())
    listed = state.entry(REFUNDS)["resources"]
    state.files[escaping] = b"the host's own files\n"
    forged = [*listed, {"uri": escaping, "digest": digest(b"x"), "size": 1}]
    state.entries[REFUNDS] = {"resources": forged}
    async with client(state) as c:
        host = SkillsClient(c)
        with pytest.raises(ProtocolViolation, match="outside the skill"):
            await host.list_skills()
        with pytest.raises(ProtocolViolation, match="outside the skill"):
            await host.get_skill(REFUNDS)
        with pytest.raises(ProtocolViolation, match="outside the skill"):
            await host.read_skill_file(state.entry(REFUNDS), escaping)
    assert state.reads == []


@pytest.mark.parametrize(
    "uri", ["skill://acme/../refunds/SKILL.md", "skill://acme/%2e%2e/refunds/SKILL.md"]
)
def test_an_entry_whose_own_uri_climbs_is_refused(uri: str) -> None:
    state = skills_server(files())
    entry = state.entry(REFUNDS)
    resources = [{**entry["resources"][0], "uri": uri}]
    with pytest.raises(ProtocolViolation, match="not a name"):
        check_entry({**entry, "uri": uri, "resources": resources})


async def test_a_dynamic_skills_file_through_dot_segments_is_not_read() -> None:
    state = skills_server(files())
    state.entries[DAILY] = {"resources": "dynamic"}
    async with client(state) as c:
        host = SkillsClient(c)
        entry = await host.get_skill(DAILY)
        for path in ("skill://reports/daily/%2e%2e/%2e%2e/acme/x", "%2e%2e/x"):
            with pytest.raises((VerificationFailed, ValueError)):
                await host.read_skill_file(entry, path)
    assert state.reads == []


ALIAS_BOMB = (
    b"---\nname: bomb\ndescription: aliases\n"
    b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + b"".join(
        f"{name}: &{name} [{','.join([f'*{before}'] * 9)}]\n".encode()
        for before, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + b"---\n\n# bomb\n"
)
"""390 bytes of SKILL.md whose frontmatter names 9**9 strings."""


async def test_an_alias_bomb_in_a_skill_md_is_refused_within_bounds() -> None:
    """The entry lists the bomb's own digest and size and the fields as the server wrote
    them: the client refuses it for its aliases, without expanding them."""
    bomb = "skill://bomb/SKILL.md"
    state = skills_server({bomb: ALIAS_BOMB})
    state.entries[bomb] = {"frontmatter": {"name": "bomb", "description": "aliases"}}
    assert len(ALIAS_BOMB) == 390

    async def scenario() -> None:
        async with client(state) as c:
            host = SkillsClient(c)
            entry = await host.get_skill(bomb)
            with pytest.raises(VerificationFailed, match="aliases expand it past"):
                await host.read_skill_file(entry)

    await asyncio.wait_for(scenario(), 60)


@pytest.mark.parametrize(
    ("frontmatter", "complaint"),
    [
        ("name: s\ndescription: d\nx: &x [*x]\n", "not YAML|inside what it names"),
        ("name: s\ndescription: d\nx: " + "[" * 5000 + "]" * 5000 + "\n", "nests too deeply"),
        ("name: s\ndescription: " + "d" * 70_000 + "\n", "longer than 65536 bytes"),
    ],
)
def test_frontmatter_beyond_the_bounds_is_refused(frontmatter: str, complaint: str) -> None:
    from snodo.extensions.skills.client import frontmatter_of

    with pytest.raises(ValueError, match=complaint):
        frontmatter_of(f"---\n{frontmatter}---\nbody\n".encode())


YAML_SCALARS = st.one_of(
    st.integers(-1000, 1000), st.booleans(), st.text(alphabet="abc xyz-1", max_size=8)
)
YAML_VALUES = st.recursive(
    YAML_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="abcdef", min_size=1, max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(alphabet="abcdef", min_size=1, max_size=5), YAML_VALUES))
def test_frontmatter_within_bounds_reads_as_yaml_reads_it(fields: dict[str, Any]) -> None:
    """Within the bounds the bounded parse is PyYAML's, typed and as written."""
    import yaml

    from snodo.extensions.skills.client import frontmatter_of

    text = yaml.safe_dump(fields, sort_keys=False) if fields else "{}\n"
    typed, written = frontmatter_of(f"---\n{text}---\n".encode())
    assert typed == yaml.safe_load(text)
    assert written == yaml.load(text, Loader=yaml.BaseLoader)
