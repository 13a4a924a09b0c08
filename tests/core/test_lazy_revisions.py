"""A revision no server serves by default (the draft 2026-12-01) is not imported with
snodo: its wire package is imported when a server serves it (named in its versions),
when a client speaks it, or when one of its messages is checked; from the
checkout's ``generated/`` folder still, ahead of any other copy on the path. Each case
in a fresh interpreter, since the test process has imported every package already.
A server that does not name the draft never imports it, unless an extension method is
registered (its name is checked against every pinned revision's methods)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import ROOT

DRAFT_PACKAGE = "snodo_wire_2026_12_01"


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_snodo_leaves_the_draft_unimported() -> None:
    assert (
        _run(
            "import sys, snodo\n"
            "from snodo.revisions import REVISIONS\n"
            "print(sorted(m for m in sys.modules if m.startswith('snodo_wire_2026')),"
            " REVISIONS.of('2026-12-01').era, REVISIONS.of('2026-12-01').served)"
        )
        == "[] modern False"
    )


def test_a_server_and_a_client_of_the_served_revisions_leave_it_unimported() -> None:
    printed = _run(
        "import asyncio, sys\n"
        "from snodo.server import Server, Spec\n"
        "from snodo.client import Client\n"
        "from snodo.client.transports import MemoryTransport\n"
        "server = Server('s', '1', spec=Spec(check_answers=True))\n"
        "@server.tool\n"
        "def hi() -> str:\n"
        "    return 'hi'\n"
        "async def main():\n"
        "    async with Client(MemoryTransport(server)) as client:\n"
        "        return (await client.call_tool('hi', {})).content[0].text\n"
        f"print(asyncio.run(main()), '{DRAFT_PACKAGE}' in sys.modules)"
    )
    assert printed == "hi False"


def test_a_server_of_the_draft_imports_it_from_the_checkout() -> None:
    printed = _run(
        "import asyncio, sys\n"
        "from snodo import Server\n"
        f"before = '{DRAFT_PACKAGE}' in sys.modules\n"
        "server = Server('s', '1', versions=['2026-12-01', '2026-07-28'])\n"
        "@server.tool\n"
        "def hi() -> str:\n"
        "    return 'hi'\n"
        "meta = {'io.modelcontextprotocol/protocolVersion': '2026-12-01',"
        " 'io.modelcontextprotocol/clientCapabilities': {}}\n"
        "message = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call',"
        " 'params': {'name': 'hi', '_meta': meta}}\n"
        "reply = asyncio.run(server.handle(message)).response\n"
        f"print(before, reply['result']['outputs'][0]['content'][0]['text'],"
        f" sys.modules['{DRAFT_PACKAGE}'].__file__)"
    )
    before, text, location = printed.split(" ")
    assert (before, text) == ("False", "hi")
    assert location == str(ROOT / "generated" / DRAFT_PACKAGE / "__init__.py")


def test_a_message_of_the_draft_checked_imports_it() -> None:
    assert (
        _run(
            "import sys\n"
            "from snodo.revisions import REVISIONS\n"
            "draft = REVISIONS.of('2026-12-01')\n"
            f"before = '{DRAFT_PACKAGE}' in sys.modules\n"
            "result = {'resultType': 'complete', 'outputs': []}\n"
            "draft.models.CallToolResult.model_validate(result)\n"
            f"print(before, '{DRAFT_PACKAGE}.models' in sys.modules, 'tools' in draft.namespaces)"
        )
        == "False True True"
    )
