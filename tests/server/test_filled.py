"""The runtime's declarations of what it fills (``snodo.server.filled``), which
``python -m generator coverage`` reads, held to what the handlers answer both ways: a key
a handler answers with is declared, and each declared key is answered by some server."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from snodo.core.caching import CacheHint
from snodo.core.result import ToolError
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.revisions import REVISIONS
from snodo.server import Limits, Server, filled
from snodo.server.legacy_limits import LegacyLimits

MODERN = REVISIONS.newest("modern")
LEGACY = REVISIONS.newest("legacy")
SPOKEN = [r for r in REVISIONS.all if r.era == "modern"]
"""Every modern revision, drafts too: the handlers fill each one's shape."""


class Forecast(BaseModel):
    city: str


def _server() -> Server:
    """A server whose answers fill every field a handler can."""
    server = Server(
        "filled",
        "1.0",
        instructions="Use the tools.",
        limits=Limits(page_size=1),
        hide_unauthorized=True,
        versions=[v for r in SPOKEN for v in r.versions],
    )

    @server.tool
    def forecast(city: str) -> Forecast:
        return Forecast(city=city)

    @server.tool
    def broken() -> str:
        raise ToolError("no")

    @server.resource("filled://note", cache=CacheHint(ttl_ms=5, scope="public"))
    def note() -> str:
        return "note"

    @server.resource("filled://other")
    def other() -> str:
        return "other"

    @server.resource_template("filled://items/{item}")
    def item(item: str) -> str:
        return item

    @server.resource_template("filled://more/{item}")
    def more(item: str) -> str:
        return item

    @server.prompt
    def greet(name: str = "you") -> str:
        return f"Hello {name}"

    @server.prompt
    def part() -> str:
        return "bye"

    @server.completion("ref/prompt", "greet")
    def names(argument: str, value: str, context: dict[str, Any]) -> list[str]:
        return ["Ada"]

    return server


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("server/discover", {}),
    ("tools/list", {}),
    ("tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}}),
    ("tools/call", {"name": "broken", "arguments": {}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "filled://note"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "greet"}),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "name", "value": "A"},
        },
    ),
]


def _answers(version: str) -> list[tuple[str, dict[str, Any]]]:
    server = _server()
    answers = []
    for method, params in CALLS:
        meta = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {**params, "_meta": meta},
        }
        reply = asyncio.run(server.handle(message, scopes=()))
        assert reply.response is not None and "result" in reply.response, reply.response
        answers.append((method, reply.response["result"]))
    return answers


def _answered() -> dict[str, set[str]]:
    """The keys each method answered with, in any modern revision."""
    keys: dict[str, set[str]] = {}
    for revision in SPOKEN:
        for method, result in _answers(revision.version):
            keys.setdefault(method, set()).update(result)
    return keys


def test_each_key_a_handler_answers_with_is_declared_and_each_declared_one_answered() -> None:
    answered = _answered()
    for method, keys in answered.items():
        spec = MODERN.methods[method]
        added = set(filled.CORE_FIELDS) | ({"ttlMs", "cacheScope"} if spec.cacheable else set())
        assert keys - added <= filled.RESULT_FIELDS[method], method
        assert filled.RESULT_FIELDS[method] <= keys, method
    assert set(answered) == set(filled.RESULT_FIELDS) - {"subscriptions/listen"}


def test_the_legacy_kernel_declares_what_initialize_answers() -> None:
    async def run() -> set[str]:
        reply = await LegacyKernel(_server()).handle(
            LegacySession(LegacyLimits()),
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY.version,
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            },
            emit=lambda m: None,
        )
        assert reply.response is not None
        return set(reply.response["result"])

    assert asyncio.run(run()) == filled.LEGACY_FIELDS["initialize"]
    for method in filled.LEGACY_FIELDS:
        assert method in LEGACY.methods


def test_the_declared_flags_and_notifications_are_the_protocols() -> None:
    """Every declared name is one a pinned revision defines (a typo would declare
    nothing), and what a server advertises by itself is declared."""
    notifications = {name for r in REVISIONS.all for name in r.server_notifications}
    client_notes = {name for r in REVISIONS.all for name in r.tables.CLIENT_NOTIFICATIONS}
    assert notifications >= filled.SENT
    assert client_notes >= filled.HANDLED

    def paths(value: dict[str, Any], prefix: str = "") -> set[str]:
        found = set()
        for key, inner in value.items():
            found.add(prefix + key)
            if isinstance(inner, dict) and key != "extensions":
                found |= paths(inner, f"{prefix}{key}.")
        return found

    assert paths(_server().capabilities()) <= filled.FLAGS


def test_each_derived_item_field_is_listed_where_its_revision_defines_it() -> None:
    """``filled.DERIVED``: each field is in every listed item of a revision whose item
    defines it, and in none of another's."""
    kinds = {"Tool": ("tools/list", "tools")}
    assert set(filled.DERIVED) <= set(kinds)
    for kind, fields in filled.DERIVED.items():
        method, key = kinds[kind]
        for revision in SPOKEN:
            defined = revision.item_fields(method, key) or frozenset()
            (result,) = [r for m, r in _answers(revision.version) if m == method]
            for field in fields:
                listed = [field in item for item in result[key]]
                assert listed and all(listed) == (field in defined), (revision, field)
                assert any(listed) == (field in defined), (revision, field)
