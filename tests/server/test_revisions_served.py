"""Revisions side by side: one server answers each protocol version with its own package.

A throwaway modern revision "2099-01-01" is made the way a spec bump makes one: a copy of
the generated ``snodo_wire`` under another name with its versions changed, plus a few
typical changes (a new required param of tools/call, a new request tools/validate, a new
capability flag, a flag removed, new required fields of the elicitation and sampling
answers and of an image block, the input-required result renamed, logging removed), and a
catalog listing it. Nothing else is edited: the
registry built from that catalog is all the server is given.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import shutil
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import pytest

from snodo import MISSING, Ask, Spec, elicitation, roots, sampling
from snodo.client import Client
from snodo.client.era import UnsupportedServer, read_probe
from snodo.client.errors import ProtocolViolation
from snodo.client.results import fits_revision
from snodo.client.transports import MemoryTransport
from snodo.core.context import Context
from snodo.core.errors import InvalidParams
from snodo.core.result import InputRequired, input_required
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.revisions import Revisions, build
from snodo.revisions.catalog import CATALOG, EXTENSIONS
from snodo.server import Server
from snodo.server.legacy_limits import LegacyLimits

GENERATED = Path(__file__).resolve().parents[2] / "generated"
FAKE = "2099-01-01"
PACKAGE = "snodo_wire_2099_01_01"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"

NEW_METHOD = """
METHODS = MappingProxyType(
    {
        **METHODS,
        "tools/validate": MethodSpec(
            "tools/validate",
            models.CallToolRequest,
            models.CallToolRequestParams,
            models.CallToolResult,
            models.CallToolResultResponse,
            False,
            False,
        ),
    }
)
"""


NO_ELICITATION_RULES = """
CAPABILITY_RULES = tuple(r for r in CAPABILITY_RULES if r.method != "elicitation/create")
"""
"""A relaxation: asking a question no longer needs a declared elicitation capability."""

NO_LOGGING = """
SERVER_NOTIFICATIONS = MappingProxyType(
    {k: v for k, v in SERVER_NOTIFICATIONS.items() if k != "notifications/message"}
)
"""
"""Logging removed: no log messages for this revision's clients."""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path.name, old)
    path.write_text(text.replace(old, new, 1))


def _make_fake(root: Path) -> None:
    """The generated modern package copied as ``PACKAGE`` and changed as a bump would."""
    target = root / PACKAGE
    shutil.copytree(GENERATED / "snodo_wire", target)
    protocol = target / "protocol.py"
    protocol.write_text(protocol.read_text().replace(MODERN, FAKE))
    models = target / "models.py"
    # tools/call gains a required param (valid under 2026-07-28 without it, not here).
    _edit(
        models,
        "class CallToolRequestParams(BaseModel):\n",
        "class CallToolRequestParams(BaseModel):\n    purpose: StrictStr\n",
    )
    # A new required result field (of a method no server here answers: the server's
    # answers stay within the revision).
    _edit(
        models,
        "class CompleteResult(BaseModel):\n",
        "class CompleteResult(BaseModel):\n"
        "    checked_at: Annotated[StrictStr, Field(alias='checkedAt')]\n",
    )
    # Answers to input requests change: an elicitation answer names its question, and a
    # sampling answer says what it cost.
    _edit(
        models,
        "class ElicitResult(BaseModel):\n",
        "class ElicitResult(BaseModel):\n"
        "    elicitation_id: Annotated[StrictStr, Field(alias='elicitationId')]\n",
    )
    _edit(
        models,
        "class CreateMessageResult(BaseModel):\n",
        "class CreateMessageResult(BaseModel):\n    cost: StrictInt\n",
    )
    # An image block needs a text alternative.
    _edit(
        models,
        "class ImageContent(BaseModel):\n",
        "class ImageContent(BaseModel):\n"
        "    alt_text: Annotated[StrictStr, Field(alias='altText')]\n",
    )
    # A new optional field of a tool's definition.
    _edit(
        models,
        "class Tool(BaseModel):\n",
        "class Tool(BaseModel):\n    deprecated: StrictBool | MISSING = MISSING\n",
    )
    # A new flag of the tools capability, and logging no longer a capability.
    _edit(
        models,
        "class ToolsCapability(BaseModel):\n",
        "class ToolsCapability(BaseModel):\n    validation: StrictBool | MISSING = MISSING\n",
    )
    text = models.read_text()
    start = text.index("class ServerCapabilities(BaseModel):")
    body = text[start : text.index("\n\n\n", start)]
    changed = re.sub(r"    logging: Annotated\[.*?\] = MISSING\n", "", body, flags=re.DOTALL)
    assert "logging" not in changed
    models.write_text(text.replace(body, changed))
    tables = target / "tables.py"
    tables.write_text(tables.read_text() + NEW_METHOD + NO_ELICITATION_RULES + NO_LOGGING)
    # The input-required result renamed, and the log-level key gone with logging.
    for path in target.glob("*.py"):
        path.write_text(path.read_text().replace("InputRequiredResult", "InputNeededResult"))
    _edit(protocol, 'META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"\n', "")


@pytest.fixture(scope="module")
def revisions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Revisions]:
    root = tmp_path_factory.mktemp("revisions")
    _make_fake(root)
    sys.path.insert(0, str(root))
    try:
        catalog = ((FAKE, PACKAGE, "modern", True, (FAKE,)), *CATALOG)
        yield build(catalog, EXTENSIONS)
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] == PACKAGE]:
            del sys.modules[name]
        importlib.invalidate_caches()


class Behind:
    """The server a gateway serves (``snodo.server.backend``), which advertises the new
    revision's flag: what each revision's answers keep of it is under test."""

    def capabilities(self) -> dict[str, Any]:
        return {"tools": {"listChanged": True, "validation": True}, "logging": {}}

    async def forward(
        self, ctx: Context, params: Mapping[str, Any]
    ) -> dict[str, Any] | InputRequired:
        assert ctx.request_method == "tools/call"
        if params["name"] == "ask":
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            return input_required({"name": elicitation.form("Your name?", schema)})
        return {"content": [{"type": "text", "text": params["arguments"]["text"]}]}


def _server(revisions: Revisions, **kwargs: Any) -> Server:
    spec = Spec(revisions=revisions, supported_versions=kwargs.pop("supported_versions", None))
    server = Server("sides", "1.0", spec=spec, **kwargs)
    server.offering.serve_backend(Behind())
    return server


def _request(method: str, version: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"_meta": meta, **(params or {})},
    }


def _answer(server: Server, message: dict[str, Any]) -> dict[str, Any]:
    reply = asyncio.run(server.handle(message))
    assert reply.response is not None
    return reply.response


def _legacy_initialize(server: Server) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        kernel = LegacyKernel(server)
        session = LegacySession(LegacyLimits())
        message = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        }
        reply = await kernel.handle(session, message, transport="test", emit=lambda m: None)
        assert reply.response is not None
        return reply.response

    return asyncio.run(run())


def test_the_registry_reads_the_new_revision_from_the_catalog(revisions: Revisions) -> None:
    assert revisions.versions("modern") == (FAKE, MODERN)
    assert revisions.of(FAKE).package == PACKAGE
    assert "tools/validate" in revisions.of(FAKE).methods
    assert "tools/validate" not in revisions.of(MODERN).methods


def test_one_server_offers_the_three_revisions_newest_first(revisions: Revisions) -> None:
    server = _server(revisions)
    assert server.versions[:2] == (FAKE, MODERN)
    assert LEGACY in server.legacy_versions
    for version in (FAKE, MODERN):
        result = _answer(server, _request("server/discover", version))["result"]
        assert result["supportedVersions"] == [FAKE, MODERN]
    assert _legacy_initialize(server)["result"]["protocolVersion"] == LEGACY


def test_each_revision_checks_its_own_requests(revisions: Revisions) -> None:
    """tools/call without ``purpose`` fits 2026-07-28 and not 2099-01-01."""
    server = _server(revisions)
    call = {"name": "echo", "arguments": {"text": "hi"}}
    modern = _answer(server, _request("tools/call", MODERN, call))
    assert modern["result"]["content"] == [{"type": "text", "text": "hi"}]
    fake = _answer(server, _request("tools/call", FAKE, call))
    assert fake["error"]["code"] == -32602
    assert "purpose" in fake["error"]["message"]
    fitted = _answer(server, _request("tools/call", FAKE, {**call, "purpose": "test"}))
    assert fitted["result"]["content"] == [{"type": "text", "text": "hi"}]


def test_a_flag_appears_only_in_the_revisions_that_define_it(revisions: Revisions) -> None:
    server = _server(revisions)
    fake = _answer(server, _request("server/discover", FAKE))["result"]["capabilities"]
    modern = _answer(server, _request("server/discover", MODERN))["result"]["capabilities"]
    legacy = _legacy_initialize(server)["result"]["capabilities"]
    assert fake["tools"] == {"listChanged": True, "validation": True}
    assert "logging" not in fake  # the fake revision removed it
    for answer in (modern, legacy):
        assert answer["tools"] == {"listChanged": True}
        assert answer["logging"] == {}


def test_versions_narrows_what_a_server_offers(revisions: Revisions) -> None:
    server = _server(revisions, versions=[MODERN])
    assert server.versions == (MODERN,)
    assert server.legacy is None  # no legacy version named: modern-only
    refused = _answer(server, _request("server/discover", FAKE))["error"]
    assert refused["code"] == -32022
    assert refused["data"]["supported"] == [MODERN]
    with pytest.raises(ValueError, match="1999-01-01"):
        Server("x", "1", versions=["1999-01-01"], spec=Spec(revisions=revisions))
    with pytest.raises(ValueError, match="modern"):
        Server("x", "1", versions=[LEGACY], spec=Spec(revisions=revisions))


def test_supported_versions_still_narrows_the_modern_ones(revisions: Revisions) -> None:
    server = _server(revisions, supported_versions=[MODERN])
    assert server.supported_versions == (MODERN,)
    assert server.legacy is not None
    assert LEGACY in server.legacy_versions


def test_a_core_method_a_revision_adds_is_served_by_server_method(
    revisions: Revisions,
) -> None:
    server = _server(revisions)
    seen: list[tuple[str, str]] = []

    @server.method("tools/validate")
    def validate(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        seen.append((ctx.protocol_version, params["name"]))
        return {"content": [{"type": "text", "text": "valid"}]}

    asked = {"name": "echo", "arguments": {}, "purpose": "check"}
    answered = _answer(server, _request("tools/validate", FAKE, asked))
    assert answered["result"]["content"] == [{"type": "text", "text": "valid"}]
    assert answered["result"]["resultType"] == "complete"
    assert seen == [(FAKE, "echo")]
    # Checked with the revision's generated params model: purpose is required there.
    missing = _answer(server, _request("tools/validate", FAKE, {"name": "echo"}))
    assert missing["error"]["code"] == -32602
    # 2026-07-28 does not define it: not served there, whatever is registered.
    refused = _answer(server, _request("tools/validate", MODERN, asked))["error"]
    assert refused == {
        "code": -32601,
        "message": f"Method not found: tools/validate (protocol version {MODERN})",
    }
    assert seen == [(FAKE, "echo")]


def test_an_unserved_method_names_the_method_and_the_revision(revisions: Revisions) -> None:
    server = _server(revisions)
    for version in (FAKE, MODERN):
        refused = _answer(server, _request("tools/validate", version))["error"]
        assert refused == {
            "code": -32601,
            "message": f"Method not found: tools/validate (protocol version {version})",
        }


def test_the_client_checks_a_result_with_the_negotiated_revision(revisions: Revisions) -> None:
    """A complete completion/complete result without ``checkedAt`` fits 2026-07-28 and
    not 2099."""
    completion = {"values": ["a"], "total": 1, "hasMore": False}
    result = {"resultType": "complete", "completion": completion}
    assert fits_revision(revisions.of(MODERN), "completion/complete", result) is result
    with pytest.raises(ProtocolViolation, match=FAKE):
        fits_revision(revisions.of(FAKE), "completion/complete", result)
    stamped = {**result, "checkedAt": "now"}
    assert fits_revision(revisions.of(FAKE), "completion/complete", stamped) is stamped
    asking = {"resultType": "input_required", "inputRequests": {}}
    assert fits_revision(revisions.of(FAKE), "tools/call", asking) is asking


def test_admission_reads_the_rules_of_the_request_revision(revisions: Revisions) -> None:
    """A question to a client that declared no elicitation: -32021 under 2026-07-28,
    whose rules need it; asked under 2099-01-01, whose rules do not."""
    server = _server(revisions)
    call = {"name": "ask", "arguments": {}}
    refused = _answer(server, _request("tools/call", MODERN, call))["error"]
    assert refused["code"] == -32021
    asked = _answer(server, _request("tools/call", FAKE, {**call, "purpose": "p"}))["result"]
    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"]["name"]["method"] == "elicitation/create"


SECRET = bytes(range(32))
ANSWERING = {"elicitation": {"form": {}}, "sampling": {}}
"""What the client of the answer tests declares."""


def _asking(revisions: Revisions) -> tuple[Server, list[tuple[str, object]]]:
    """A server whose tools ask a question and a sample, and note what they read."""
    server = Server("asks", "1.0", spec=Spec(revisions=revisions), state_secret=SECRET)
    read: list[tuple[str, object]] = []
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}

    @server.tool
    def greet(ctx: Context) -> object:
        question = elicitation.form("Your name?", schema)
        reply = elicitation.response(ctx, "name", question)
        if reply is MISSING:
            return input_required({"name": question})
        read.append((ctx.protocol_version, reply))
        return "ok"

    @server.tool
    def summarise(ctx: Context) -> object:
        question = sampling.create_message([sampling.message("user", "Summarise")], max_tokens=10)
        reply = sampling.response(ctx, "sample", question)
        if reply is MISSING:
            return input_required({"sample": question})
        read.append((ctx.protocol_version, sampling.text(reply)))
        return "ok"

    return server, read


def _retry(server: Server, version: str, tool: str, key: str, given: object) -> dict[str, Any]:
    """Round one of ``tool`` under ``version``, then the retry answering ``key`` with
    ``given``: the retry's response."""
    call = {"name": tool, "arguments": {}, "purpose": "p"}
    message = _request("tools/call", version, call)
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = ANSWERING
    first = _answer(server, message)["result"]
    assert first["resultType"] == "input_required"
    message["params"]["inputResponses"] = {key: given}
    message["params"]["requestState"] = first["requestState"]
    return _answer(server, message)


@pytest.mark.parametrize("version", [FAKE, MODERN])
def test_each_revision_reads_elicitation_answers_with_its_own_model(
    revisions: Revisions, version: str
) -> None:
    """An answer without ``elicitationId`` fits 2026-07-28 and not 2099-01-01 (whose
    model needs it), plain as it is; one with it is read under 2099-01-01."""
    server, read = _asking(revisions)
    plain = {"action": "accept", "content": {"name": "Ada"}}
    answered = _retry(server, version, "greet", "name", plain)
    if version == MODERN:
        assert answered["result"]["content"] == [{"type": "text", "text": "ok"}]
        assert read == [(MODERN, elicitation.Accepted({"name": "Ada"}))]
        return
    assert answered["error"]["code"] == -32602
    assert "inputResponses.name" in answered["error"]["message"]
    assert read == []
    named = {**plain, "elicitationId": "q1"}
    answered = _retry(server, FAKE, "greet", "name", named)
    assert answered["result"]["content"] == [{"type": "text", "text": "ok"}]
    assert read == [(FAKE, elicitation.Accepted({"name": "Ada"}))]


@pytest.mark.parametrize("version", [FAKE, MODERN])
def test_each_revision_reads_sampling_answers_with_its_own_model(
    revisions: Revisions, version: str
) -> None:
    """A sample without ``cost`` fits 2026-07-28, not 2099-01-01."""
    server, read = _asking(revisions)
    sample = {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m"}
    answered = _retry(server, version, "summarise", "sample", sample)
    if version == MODERN:
        assert answered["result"]["content"] == [{"type": "text", "text": "ok"}]
        assert read == [(MODERN, "short")]
        return
    assert answered["error"]["code"] == -32602
    assert read == []
    answered = _retry(server, FAKE, "summarise", "sample", {**sample, "cost": 3})
    assert answered["result"]["content"] == [{"type": "text", "text": "ok"}]
    assert read == [(FAKE, "short")]


def test_a_handler_reads_an_answer_with_the_request_revision(revisions: Revisions) -> None:
    """Past the request's check, ``response`` itself reads with the context's revision
    (a context made by hand: no server in between)."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    question = elicitation.form("Your name?", schema)
    plain = {"action": "accept", "content": {"name": "Ada"}}

    def ctx(version: str) -> Context:
        return Context(
            request_id=1,
            request_method="tools/call",
            request_params={},
            protocol_version=version,
            client_capabilities={},
            input_responses={"name": plain},
            revision=revisions.of(version),
        )

    assert elicitation.response(ctx(MODERN), "name", question) == elicitation.Accepted(
        {"name": "Ada"}
    )
    with pytest.raises(InvalidParams, match="elicitation"):
        elicitation.response(ctx(FAKE), "name", question)


def test_a_tool_returns_content_blocks_of_the_request_revision(revisions: Revisions) -> None:
    """An image block without ``altText`` is a block under 2026-07-28; under 2099-01-01,
    whose blocks need it, it is no block, and the tool's value goes out as JSON text."""
    server = Server("blocks", "1.0", spec=Spec(revisions=revisions))
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}

    @server.tool
    def picture(alt: bool) -> object:
        return {**image, "altText": "hi"} if alt else image

    def content(version: str, alt: bool) -> Any:
        call = {"name": "picture", "arguments": {"alt": alt}, "purpose": "p"}
        return _answer(server, _request("tools/call", version, call))["result"]["content"]

    assert content(MODERN, alt=False) == [image]
    assert content(FAKE, alt=False) == [{"type": "text", "text": json.dumps(image)}]
    assert content(FAKE, alt=True) == [{**image, "altText": "hi"}]


def test_the_registry_reads_names_from_each_revision_package(revisions: Revisions) -> None:
    """The input-required result and the ``_meta`` keys are the package's own facts
    (its overlay's), read through the registry: no runtime module names them."""
    fake, modern = revisions.of(FAKE), revisions.of(MODERN)
    assert fake.input_required_result is not None
    assert fake.input_required_result.__name__ == "InputNeededResult"
    assert modern.protocol.INPUT_REQUIRED_RESULT == "InputRequiredResult"
    assert modern.log_level_key == "io.modelcontextprotocol/logLevel"
    assert fake.log_level_key is None
    assert "notifications/message" in modern.server_notifications
    assert "notifications/message" not in fake.server_notifications
    assert revisions.of(LEGACY).input_required_result is None


def test_a_revision_without_logging_gets_no_log_message(revisions: Revisions) -> None:
    """The same request asking for log messages: answered with one under 2026-07-28,
    without under 2099-01-01, which has neither the key nor the notification."""
    server = Server("logs", "1.0", spec=Spec(revisions=revisions))

    @server.tool
    def noisy(ctx: Context) -> str:
        ctx.log("info", "working")
        return "done"

    def notes(version: str) -> list[dict[str, Any]]:
        message = _request("tools/call", version, {"name": "noisy", "purpose": "p"})
        message["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "debug"
        reply = asyncio.run(server.handle(message))
        assert reply.response is not None
        assert reply.response["result"]["content"] == [{"type": "text", "text": "done"}]
        return reply.notifications

    assert [note["method"] for note in notes(MODERN)] == ["notifications/message"]
    assert notes(FAKE) == []


def test_an_ask_for_roots_reads_the_roots_of_any_revision(revisions: Revisions) -> None:
    """A declarative ask reads the answer by the question's kind: the roots answered
    under 2099-01-01 (its own ListRootsResult) reach the handler as a list, and a
    handler that takes the whole answer gets the model it annotated."""
    server = Server("roots", "1.0", spec=Spec(revisions=revisions), state_secret=SECRET)
    seen: list[object] = []

    @server.tool
    def where(
        found: Annotated[list[roots.Root] | None, Ask(roots.list_roots())],
        whole: Annotated[roots.ListRootsResult, Ask(roots.list_roots())],
    ) -> str:
        seen.extend([found, whole])
        return "ok"

    answer = {"roots": [{"uri": "file:///home/ana", "name": "home"}]}
    for version in (FAKE, MODERN):
        seen.clear()
        call = {"name": "where", "arguments": {}, "purpose": "p"}
        message = _request("tools/call", version, call)
        message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"roots": {}}
        first = _answer(server, message)["result"]
        assert first["resultType"] == "input_required"
        assert sorted(first["inputRequests"]) == ["found", "whole"]
        message["params"]["inputResponses"] = {"found": answer, "whole": answer}
        message["params"]["requestState"] = first["requestState"]
        assert _answer(server, message)["result"]["content"] == [{"type": "text", "text": "ok"}]
        found, whole = seen
        assert isinstance(found, list) and [root.uri for root in found] == ["file:///home/ana"]
        assert isinstance(whole, roots.ListRootsResult)


def test_the_client_leaves_a_task_result_to_the_tasks_extension(revisions: Revisions) -> None:
    """A result of another kind than complete or input_required is an extension's to
    check, under any revision."""
    task = {"resultType": "task", "task": {"taskId": "t1", "status": "working"}}
    for version in (FAKE, MODERN):
        assert fits_revision(revisions.of(version), "tools/call", task) is task
    renamed = {"resultType": "input_required", "inputRequests": {"x": "not a request"}}
    with pytest.raises(ProtocolViolation, match=FAKE):
        fits_revision(revisions.of(FAKE), "tools/call", renamed)


def test_a_flag_a_revision_adds_is_given_to_the_server(revisions: Revisions) -> None:
    """``Spec(capabilities=...)`` merges a flag into what the server advertises; each
    revision's answer keeps it only where the revision defines it."""
    server = Server(
        "flags", "1.0", spec=Spec(revisions=revisions, capabilities={"tools": {"validation": True}})
    )

    @server.tool
    def echo(text: str) -> str:
        return text

    fake = _answer(server, _request("server/discover", FAKE))["result"]["capabilities"]
    modern = _answer(server, _request("server/discover", MODERN))["result"]["capabilities"]
    assert fake["tools"] == {"listChanged": True, "validation": True}
    assert modern["tools"] == {"listChanged": True}
    assert _legacy_initialize(server)["result"]["capabilities"]["tools"] == {"listChanged": True}
    assert server.capabilities()["tools"] == {"listChanged": True, "validation": True}
    with pytest.raises(ValueError, match=r"tools\.madeUp is a flag no served revision defines"):
        Server("x", "1", spec=Spec(revisions=revisions, capabilities={"tools": {"madeUp": True}}))
    with pytest.raises(ValueError, match=r"tools\.validation .*\(2026-07-28, 2025-11-25\)"):
        Server(
            "x",
            "1",
            spec=Spec(revisions=revisions, capabilities={"tools": {"validation": True}}),
            versions=[MODERN, LEGACY],
        )
    Server(
        "x", "1", spec=Spec(revisions=revisions, capabilities={"experimental": {"any": {"x": 1}}})
    )


def test_a_field_a_revision_adds_goes_to_that_revision_only(revisions: Revisions) -> None:
    """``fields=`` on a decorator: the tool's ``deprecated`` is listed under 2099-01-01,
    whose Tool defines it, and neither under 2026-07-28 nor in a legacy session."""
    server = Server("fields", "1.0", spec=Spec(revisions=revisions))

    @server.tool(fields={"deprecated": True})
    def old(text: str) -> str:
        return text

    @server.prompt(fields={"title": "A greeting"})
    def greet() -> str:
        return "hi"

    def listed(method: str, version: str) -> list[dict[str, Any]]:
        result = _answer(server, _request(method, version, {}))["result"]
        return result["tools" if method == "tools/list" else "prompts"]  # type: ignore[no-any-return]

    (fake,) = listed("tools/list", FAKE)
    (modern,) = listed("tools/list", MODERN)
    assert fake["deprecated"] is True
    assert "deprecated" not in modern and modern["name"] == "old"
    assert listed("prompts/list", MODERN)[0]["title"] == "A greeting"

    async def legacy_tools() -> list[dict[str, Any]]:
        kernel, session = LegacyKernel(server), LegacySession(LegacyLimits())
        opened = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        }
        await kernel.handle(session, opened, emit=lambda m: None)
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        reply = await kernel.handle(session, listing, emit=lambda m: None)
        assert reply.response is not None
        return reply.response["result"]["tools"]  # type: ignore[no-any-return]

    (legacy,) = asyncio.run(legacy_tools())
    assert legacy["name"] == "old" and "deprecated" not in legacy
    with pytest.raises(ValueError, match="'madeUp', which no served revision defines"):
        server.add_tool(lambda: "x", name="made_up", fields={"madeUp": 1})
    with pytest.raises(ValueError, match="'name', which it has already"):
        server.add_tool(lambda: "x", name="named", fields={"name": "other"})
    fake_only = Server("narrow", "1.0", spec=Spec(revisions=revisions), versions=[MODERN])
    with pytest.raises(ValueError, match="'deprecated', which no served revision"):
        fake_only.add_tool(lambda: "x", name="old", fields={"deprecated": True})


def test_the_client_settles_on_the_newest_revision_both_sides_speak(
    revisions: Revisions,
) -> None:
    """A client of the registry that knows 2099-01-01 speaks it to a server that does,
    and keeps working with a server of 2026-07-28 alone (its -32022 names what it
    speaks); told to speak 2026-07-28 only, it does, whatever the server serves."""

    def answering(versions: list[str]) -> Server:
        server = Server("sides", "1.0", spec=Spec(revisions=revisions), versions=versions)

        @server.tool
        def echo(text: str) -> str:
            return text

        return server

    async def call(server: Server, **options: Any) -> tuple[str, str]:
        """The version spoken, and the tool's text (2099-01-01 requires a purpose)."""
        async with Client(MemoryTransport(server), revisions=revisions, **options) as client:
            params = {"name": "echo", "arguments": {"text": "hi"}, "purpose": "p"}
            result = await client.request("tools/call", params)
            return client.protocol_version, result["content"][0]["text"]

    newer = answering([FAKE, MODERN])
    older = answering([MODERN])
    assert asyncio.run(call(older)) == (MODERN, "hi")
    assert asyncio.run(call(older, versions=[MODERN])) == (MODERN, "hi")
    assert asyncio.run(call(newer)) == (FAKE, "hi")
    assert asyncio.run(call(newer, versions=[MODERN])) == (MODERN, "hi")
    with pytest.raises(ValueError, match="1999-01-01"):
        Client(MemoryTransport(newer), revisions=revisions, versions=["1999-01-01"])
    with pytest.raises(ValueError, match=LEGACY):
        Client(MemoryTransport(newer), revisions=revisions, versions=[LEGACY])


def test_a_probe_settles_on_the_newest_version_both_sides_speak() -> None:
    """The stdio probe's reading, with the versions the client speaks."""
    discover = {"result": {"supportedVersions": [MODERN, "2027-02-02"]}}
    assert read_probe(discover, MODERN, "auto", (FAKE, MODERN)) == ("modern", MODERN)
    assert read_probe(discover, FAKE, "auto", ("2027-02-02", MODERN)) == ("modern", "2027-02-02")
    with pytest.raises(UnsupportedServer, match=f"this client: {FAKE}"):
        read_probe({"result": {"supportedVersions": ["2001-01-01"]}}, FAKE, "modern", (FAKE,))
