"""Skills through ``proxy`` and ``mount``: the extension declared at the front as the
backend declares it, entries, gets, directory reads and file reads passed through,
and under a mount every ``skill://`` URI prefixed while digests stay true (the
client verifies each file it reads against the entry it got through the gateway)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from snodo import Client, Limits, Server
from snodo.client import RequestError
from snodo.client.transports import MemoryTransport
from snodo.extensions import skills
from snodo.extensions.skills import SkillsClient, VerificationFailed
from snodo.gateway import mount, proxy, serve_group
from snodo.server.lifespan import StartupFailed
from tests.extensions.skills.handmade_server import SkillsServer, skill_md, skills_server
from tests.support.processes import serving, snodo_run

SKILLS = "io.modelcontextprotocol/skills"
GIT = "skill://git-workflow/SKILL.md"
REFUNDS = "skill://acme/billing/refunds/SKILL.md"
EMAIL = "skill://acme/billing/refunds/examples/email.md"
TARGET = "tests/extensions/skills/handmade_server.py:server"


def files() -> dict[str, bytes]:
    return {
        GIT: skill_md("git-workflow", "Branch and commit the team's way"),
        REFUNDS: skill_md("refunds", "Process refunds"),
        EMAIL: b"Dear customer,\n",
    }


def backend(**options: Any) -> SkillsServer:
    return skills_server(files(), **options)


def proxied(state: SkillsServer) -> Server:
    inner = state.server
    assert inner is not None
    return proxy(lambda **o: Client(MemoryTransport(inner), **o), passing=[skills.passed()])


def run(scenario: Any) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.mark.parametrize("directory_read", [False, True])
def test_a_proxy_declares_and_passes_skills_through(directory_read: bool) -> None:
    state = backend(directory_read=directory_read)
    front = proxied(state)

    async def scenario() -> None:
        async with Client(MemoryTransport(front)) as client:
            host = SkillsClient(client)
            extensions = (await client.discover()).capabilities.extensions
            assert isinstance(extensions, dict)
            assert extensions[SKILLS] == ({"directoryRead": True} if directory_read else {})
            listed = await host.list_skills()
            assert [s.uri for s in listed] == [REFUNDS, GIT]
            entry = await host.get_skill(REFUNDS)
            assert entry == listed[0]
            email = await host.read_skill_file(entry, "examples/email.md")
            assert email.content == b"Dear customer,\n"
            main = await host.read_skill_file(entry)
            assert main.verified and main.text is not None
            with pytest.raises(RequestError) as unknown:  # the backend's own answer
                await host.get_skill("skill://nothing/SKILL.md")
            assert unknown.value.code == -32602
            directory = {"uri": "skill://acme/billing/refunds"}
            if directory_read:
                read = await client.request("resources/directory/read", directory)
                assert [r["uri"] for r in read["resources"]] == [
                    "skill://acme/billing/refunds/SKILL.md",
                    "skill://acme/billing/refunds/examples",
                ]
            else:
                with pytest.raises(RequestError) as missing:
                    await client.request("resources/directory/read", directory)
                assert missing.value.code == -32601
            # A file changed behind the proxy fails against the entry got through it.
            state.files[EMAIL] = b"Dear customer!\n"
            with pytest.raises(VerificationFailed, match="digest"):
                await host.read_skill_file(entry, "examples/email.md")

    run(scenario)
    assert state.asked.count("skills/get") == 2


def test_a_proxy_of_a_server_without_skills_offers_none() -> None:
    state = backend(declare=False)
    front = proxied(state)

    async def scenario() -> None:
        async with Client(MemoryTransport(front)) as client:
            host = SkillsClient(client)
            extensions = (await client.discover()).capabilities.extensions
            assert not isinstance(extensions, dict) or SKILLS not in extensions
            assert await host.list_skills() == []
            with pytest.raises(RequestError) as refused:
                await client.request("skills/list")
            assert refused.value.code == -32601

    run(scenario)


def _main(directory_read: bool = True, page_size: int | None = None) -> tuple[Server, SkillsServer]:
    main = Server("main", "1.0.0", limits=Limits(page_size=page_size))

    @main.resource("main://about")
    def about() -> str:
        return "the main server"

    state = backend(directory_read=directory_read)
    assert state.server is not None
    mount(main, state.server, prefix="docs", passing=[skills.passed()])
    return main, state


def test_mount_prefixes_the_skill_paths_and_the_digests_stay_true() -> None:
    main, state = _main()

    async def scenario() -> None:
        async with Client(MemoryTransport(main)) as client:
            host = SkillsClient(client)
            extensions = (await client.discover()).capabilities.extensions
            assert isinstance(extensions, dict) and extensions[SKILLS] == {"directoryRead": True}
            listed = await host.list_skills()
            assert [s.uri for s in listed] == [
                "skill://docs/acme/billing/refunds/SKILL.md",
                "skill://docs/git-workflow/SKILL.md",
            ]
            refunds = listed[0]
            assert refunds.frontmatter.name == "refunds"  # the name stays its own
            assert sorted(r.uri for r in refunds.resources) == [  # type: ignore[union-attr]
                "skill://docs/acme/billing/refunds/SKILL.md",
                "skill://docs/acme/billing/refunds/examples/email.md",
            ]
            # Every file read through the mount is the entry's (digests and sizes true).
            for item in refunds.resources:  # type: ignore[union-attr]
                read = await host.read_skill_file(refunds, item.uri)
                assert read.verified and read.uri == item.uri
            got = await host.get_skill("skill://docs/git-workflow/SKILL.md")
            assert got == listed[1]
            assert (await host.read_skill_file(got)).text.startswith("---\nname: git")  # type: ignore[union-attr]
            for unknown in (GIT, "skill://docs/nothing/SKILL.md", "skill://else/x/SKILL.md"):
                with pytest.raises(RequestError) as refused:
                    await host.get_skill(unknown)
                assert refused.value.code == -32602
            uris = sorted(r.uri for r in await client.list_resources())
            assert uris == [
                "main://about",
                "skill://docs/acme/billing/refunds/SKILL.md",
                "skill://docs/acme/billing/refunds/examples/email.md",
                "skill://docs/git-workflow/SKILL.md",
            ]
            listing = await client.request(
                "resources/directory/read", {"uri": "skill://docs/acme/billing/refunds"}
            )
            assert [r["uri"] for r in listing["resources"]] == [
                "skill://docs/acme/billing/refunds/SKILL.md",
                "skill://docs/acme/billing/refunds/examples",
            ]
            with pytest.raises(RequestError) as not_a_directory:
                await client.request("resources/directory/read", {"uri": "main://about"})
            assert not_a_directory.value.code == -32602
            # The main server's own resources are read as before.
            about = await client.read_resource("main://about")
            assert about.contents[0].text == "the main server"  # type: ignore[union-attr]

    run(scenario)
    # The member was asked with the URIs it knows.
    assert sorted(set(state.reads)) == sorted(files())


def test_mount_pages_the_merged_skills_and_omits_directory_read_unless_all_read() -> None:
    main, _ = _main(directory_read=False, page_size=1)

    async def scenario() -> None:
        async with Client(MemoryTransport(main)) as client:
            host = SkillsClient(client)
            extensions = (await client.discover()).capabilities.extensions
            assert isinstance(extensions, dict) and extensions[SKILLS] == {}
            first = await host.list_skills(page=True)
            assert len(first) == 1 and first.next_cursor is not None
            rest = await host.list_skills(cursor=first.next_cursor)
            assert [s.uri for s in [*first, *rest]] == [
                "skill://docs/acme/billing/refunds/SKILL.md",
                "skill://docs/git-workflow/SKILL.md",
            ]
            assert rest.next_cursor is None

    run(scenario)


def test_mount_serves_the_members_skills_beside_the_servers_own() -> None:
    mine = skills_server({"skill://house-style/SKILL.md": skill_md("house-style", "Write so")})
    main = mine.server
    assert main is not None
    member = backend(directory_read=True)
    assert member.server is not None
    mount(main, member.server, prefix="docs", passing=[skills.passed()])

    async def scenario() -> None:
        for _ in range(2):  # a second start keeps the same skills
            async with Client(MemoryTransport(main)) as client:
                host = SkillsClient(client)
                extensions = (await client.discover()).capabilities.extensions
                assert isinstance(extensions, dict) and extensions[SKILLS] == {}
                listed = await host.list_skills()
                assert [s.uri for s in listed] == [
                    "skill://house-style/SKILL.md",
                    "skill://docs/acme/billing/refunds/SKILL.md",
                    "skill://docs/git-workflow/SKILL.md",
                ]
                for skill in listed:
                    assert skill == await host.get_skill(skill.uri)
                    assert (await host.read_skill_file(skill)).verified
                with pytest.raises(RequestError) as unknown:
                    await host.get_skill("skill://nothing/SKILL.md")
                assert unknown.value.code == -32602

    run(scenario)
    assert mine.asked.count("skills/get") == 4  # the own skill and the unknown URI, twice


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_served_skills_through_a_mount_in_either_era(era: str) -> None:
    """A server's own ``server.skills`` folder, mounted, read over HTTP by a front
    client of either era: the nested and dynamic skills too, every listed file
    verified."""
    target = "tests/extensions/skills/mount_server.py:main"

    async def scenario(url: str) -> None:
        async with Client.http(url, era=era) as client:
            host = SkillsClient(client)
            extensions = (await client.discover()).capabilities.extensions
            assert isinstance(extensions, dict) and extensions[SKILLS] == {"directoryRead": True}
            listed = await host.list_skills()
            assert all(s.uri.startswith("skill://team/") for s in listed)
            assert {s.frontmatter.name for s in listed} >= {"refunds", "daily"}
            for skill in listed:
                if skill.resources == "dynamic":
                    assert not (await host.read_skill_file(skill)).verified
                    continue
                for item in skill.resources:
                    assert (await host.read_skill_file(skill, item.uri)).verified
            children = await client.request(
                "resources/directory/read", {"uri": "skill://team/acme/billing/refunds"}
            )
            assert {r["uri"] for r in children["resources"]} == {
                "skill://team/acme/billing/refunds/SKILL.md",
                "skill://team/acme/billing/refunds/examples",
            }
            assert client.era == era

    with serving(lambda port: snodo_run(target, "http", "--port", str(port))) as served:
        asyncio.run(asyncio.wait_for(scenario(f"{served.base}/mcp"), 60))


def test_a_mounted_members_skill_file_update_is_heard_under_its_prefix() -> None:
    main, state = _main()
    assert state.server is not None
    served_email = "skill://docs/acme/billing/refunds/examples/email.md"

    async def scenario() -> dict[str, Any]:
        async with Client(MemoryTransport(main)) as client:

            async def listen() -> dict[str, Any]:
                async for note in client.listen(resourceSubscriptions=[served_email]):
                    if note.get("method") == "notifications/resources/updated":
                        return dict(note["params"])
                raise AssertionError("the stream ended")

            listening = asyncio.create_task(listen())
            await asyncio.sleep(0.2)  # a turn for the subscription to open
            state.files[EMAIL] = b"Dear customer, anew\n"
            state.server.notify_resource_updated(EMAIL)  # type: ignore[union-attr]
            return await asyncio.wait_for(listening, 10)

    heard = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert heard["uri"] == served_email


def test_proxy_config_serves_two_servers_same_skill_uris_apart() -> None:
    """``snodo proxy --config``'s server (``serve_group``): two stdio servers serving
    the same skill URIs are told apart by their prefixes, each file verified."""
    command = {"command": sys.executable, "args": ["-m", "snodo", "run", TARGET]}
    front = serve_group({"mcpServers": {"one": command, "two": command}}, passing=[skills.passed()])

    async def scenario() -> None:
        async with Client(MemoryTransport(front)) as client:
            host = SkillsClient(client)
            listed = await host.list_skills()
            uris = [s.uri for s in listed]
            assert uris == [
                "skill://one/acme/refunds/SKILL.md",
                "skill://one/git-workflow/SKILL.md",
                "skill://two/acme/refunds/SKILL.md",
                "skill://two/git-workflow/SKILL.md",
            ]
            for skill in listed:
                for item in skill.resources:  # type: ignore[union-attr]
                    assert (await host.read_skill_file(skill, item.uri)).verified

    run(scenario)


def test_an_own_skill_under_a_members_prefix_is_refused_at_start() -> None:
    mine = skills_server({"skill://docs/house/SKILL.md": skill_md("house", "Our own")})
    main = mine.server
    assert main is not None
    member = backend()
    assert member.server is not None
    mount(main, member.server, prefix="docs", passing=[skills.passed()])

    async def scenario() -> None:
        async with Client(MemoryTransport(main)) as client:
            host = SkillsClient(client)
            await host.list_skills()

    with pytest.raises(StartupFailed, match="skill://docs/house/SKILL"):
        run(scenario)
