"""The conformance client program's flows, in process: what the runner's client mocks
check, without the runner (scripts/conformance runs the real thing).

tools_call goes to a snodo Server through MemoryTransport; the other flows go to a
scripted transport that answers like the runner's mocks and records every request
with its headers.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

import pytest

from snodo.client.transports import MemoryTransport
from snodo.extensions.skills import EXTENSION_ID
from snodo.server import Server
from tests.conformance.client import ScenarioFailed, make_client, run

Answer = Callable[[str, dict[str, Any]], dict[str, Any]]


class Scripted:
    """A ClientTransport whose answers come from a function of (method, params)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.sent: list[tuple[dict[str, Any], dict[str, str]]] = []

    async def request(
        self,
        message: dict[str, Any],
        headers: Mapping[str, str],
        on_notification: Callable[[dict[str, Any]], None],
    ) -> dict[str, Any]:
        self.sent.append((message, dict(headers)))
        params = {k: v for k, v in message["params"].items() if k != "_meta"}
        result = self.answer(message["method"], params)
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError
        yield {}  # pragma: no cover

    async def close(self) -> None:
        return None

    def calls(self) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, str]]]:
        """(message, params, headers) of each tools/call."""
        return [(m, m["params"], h) for m, h in self.sent if m["method"] == "tools/call"]


def scenario(name: str, transport: Any, context: Mapping[str, Any] | None = None) -> None:
    asyncio.run(run(name, make_client(transport), context or {}))


def tools(*entries: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    listed = [{"name": name, "inputSchema": schema} for name, schema in entries]
    return {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": listed}


def text(value: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": value}]}


EMPTY = {"type": "object", "properties": {}}


def test_tools_call_against_a_snodo_server() -> None:
    server = Server("adder", "1.0.0")
    seen: list[tuple[float, float]] = []

    @server.tool
    def add_numbers(a: float, b: float) -> str:
        """The sum of a and b."""
        seen.append((a, b))
        return f"The sum of {a:g} and {b:g} is {a + b:g}"

    scenario("tools_call", MemoryTransport(server))
    assert seen == [(2, 3)]


# The MRTR mock: state is an opaque string the client must return byte for byte.
STATE = '{"nonce": "n\\u00e9 ", "originalId":1}'
CONFIRM = {
    "method": "elicitation/create",
    "params": {
        "message": "Please confirm to continue",
        "requestedSchema": {
            "type": "object",
            "properties": {"confirmed": {"type": "boolean", "description": "Confirm?"}},
        },
    },
}


def mrtr_mock(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "tools/list":
        names = ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated")
        return tools(*((name, EMPTY) for name in (*names, "test_mrtr_no_result_type")))
    name, answered = params["name"], "inputResponses" in params
    if name in ("test_mrtr_echo_state", "test_mrtr_no_state") and not answered:
        asked: dict[str, Any] = {
            "resultType": "input_required",
            "inputRequests": {"confirm": CONFIRM},
        }
        return {**asked, "requestState": STATE} if name == "test_mrtr_echo_state" else asked
    if name == "test_mrtr_no_result_type":
        return {"content": [{"type": "text", "text": "no-result-type-test-ok"}]}
    return text(f"{name}-ok")


def test_request_state_flow() -> None:
    transport = Scripted(mrtr_mock)
    scenario("sep-2322-client-request-state", transport)
    calls = transport.calls()
    assert [p["name"] for _, p, _ in calls] == [
        "test_mrtr_echo_state",
        "test_mrtr_unrelated",  # before the retry, carrying nothing of the other flow
        "test_mrtr_echo_state",
        "test_mrtr_no_state",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",  # taken as complete: no retry
    ]
    (first, _, _), (_, unrelated, _), (retry, echoed, _) = calls[:3]
    assert "inputResponses" not in unrelated and "requestState" not in unrelated
    assert echoed["requestState"] == STATE
    assert echoed["inputResponses"] == {
        "confirm": {"action": "accept", "content": {"confirmed": True}}
    }
    assert retry["id"] != first["id"]
    no_state = calls[4][1]
    assert "inputResponses" in no_state and "requestState" not in no_state


def test_custom_headers_mirror_the_context_calls() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "empty_val": {"type": "string", "x-mcp-header": "EmptyVal"},
            "non_ascii_val": {"type": "string", "x-mcp-header": "NonAscii"},
            "float_val": {"type": "number"},
        },
    }

    def mock(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return tools(("custom", schema)) if method == "tools/list" else text("ok")

    arguments = [
        {"region": "us-west1", "priority": 42, "verbose": False, "empty_val": "",
         "non_ascii_val": "Hello, 世界", "float_val": 3.14159},
        {"region": "us-east1", "priority": 1, "verbose": None},
    ]  # fmt: skip
    transport = Scripted(mock)
    context = {"toolCalls": [{"name": "custom", "arguments": a} for a in arguments]}
    scenario("http-custom-headers", transport, context)
    (_, full, sent), (_, nulls, sent_null) = transport.calls()
    assert (full["arguments"], nulls["arguments"]) == tuple(arguments)
    params = {k: v for k, v in sent.items() if k.startswith("Mcp-Param-")}
    assert params == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-EmptyVal": "",
        "Mcp-Param-NonAscii": "=?base64?SGVsbG8sIOS4lueVjA==?=",
    }
    assert "Mcp-Param-Verbose" not in sent_null


def test_invalid_tool_headers_call_only_the_valid_tool() -> None:
    def prop(header: Any, kind: str = "string") -> dict[str, Any]:
        return {"type": "object", "properties": {"v": {"type": kind, "x-mcp-header": header}}}

    valid = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
    }
    listed = tools(
        ("valid_tool", valid),
        ("invalid_empty_header", prop("")),
        ("invalid_number_header", prop("Score", "number")),
        ("invalid_space_in_name", prop("My Region")),
        ("invalid_non_ascii_name", prop("Région")),
    )
    transport = Scripted(lambda method, _: listed if method == "tools/list" else text("ok"))
    scenario("http-invalid-tool-headers", transport)
    [(_, params, headers)] = transport.calls()
    assert params["name"] == "valid_tool"
    assert params["arguments"] == {"region": "us-west1"}
    assert headers["Mcp-Param-Region"] == "us-west1"


def test_ref_no_deref_lists_tools_only() -> None:
    schema = {"type": "object", "properties": {"profile": {"$ref": "http://127.0.0.1:9/x.json"}}}
    transport = Scripted(lambda method, _: tools(("lookup_user", schema)))
    scenario("json-schema-ref-no-deref", transport)
    assert [m["method"] for m, _ in transport.sent] == ["tools/list"]


def test_unknown_scenario_fails() -> None:
    with pytest.raises(ScenarioFailed, match="unknown scenario"):
        scenario("no-such-scenario", Scripted(mrtr_mock))


def test_auth_scenarios_get_oauth_with_the_context_credentials() -> None:
    from joserfc.jwk import ECKey

    from snodo.oauth import CrossAppAccess, HeadlessUserAgent, WorkloadIdentity
    from tests.conformance.client import AUTH_SCENARIOS, CLIENT_METADATA_URL, SCENARIOS, make_oauth

    assert set(AUTH_SCENARIOS) <= set(SCENARIOS)
    plain = make_oauth("auth/metadata-default", {})
    assert isinstance(plain.user_agent, HeadlessUserAgent)
    assert (plain.client_id, plain.grant) == (None, "authorization_code")
    assert plain.client_metadata_url == CLIENT_METADATA_URL
    pre = make_oauth("auth/pre-registration", {"client_id": "c", "client_secret": "s"})
    assert (pre.client_id, pre.client_secret, pre.grant) == ("c", "s", "authorization_code")
    machine = make_oauth("auth/client-credentials-basic", {"client_id": "m", "client_secret": "k"})
    assert (machine.client_id, machine.grant) == ("m", "client_credentials")
    assert machine.client_key is None
    pem = ECKey.generate_key("P-256").as_pem(private=True).decode()
    context = {"client_id": "j", "private_key_pem": pem, "signing_algorithm": "ES256"}
    signed = make_oauth("auth/client-credentials-jwt", context)
    assert (signed.client_id, signed.client_secret, signed.grant) == (
        "j",
        None,
        "client_credentials",
    )
    assert signed.client_key is not None
    assert (signed.client_key.algorithm, signed.client_key.audience) == ("ES256", "issuer")
    assert plain.dpop.key is None and make_oauth("auth/dpop-nonce", {}).dpop.key is not None
    workload = make_oauth("auth/wif-jwt-bearer", {"client_id": "w", "valid_jwt": "a.b.c"})
    assert (workload.grant, workload.client_id) == ("jwt_bearer", "w")
    assert isinstance(workload.assertion, WorkloadIdentity)
    context = {
        "client_id": "mcp-client",
        "client_secret": "secret",
        "idp_client_id": "idp-client",
        "idp_id_token": "x.y.z",
        "idp_token_endpoint": "http://127.0.0.1:9/token",
    }
    managed = make_oauth("auth/enterprise-managed-authorization", context)
    assert (managed.grant, managed.client_id, managed.client_secret) == (
        "jwt_bearer",
        "mcp-client",
        "secret",
    )
    assert isinstance(managed.assertion, CrossAppAccess)
    assert (managed.assertion.client_id, managed.assertion.auth_method) == ("idp-client", "none")


# The Skills mocks: one skill whose SKILL.md is served as listed, or altered.
SKILL_URI = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"
SKILL_MD = "---\nname: pdf-processing\ndescription: Extract PDF text\n---\n\nSkill body.\n"
FORMS = "Supporting content.\n"


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def skills_mock(served: str, listed: str = SKILL_MD) -> Answer:
    """``listed``: the SKILL.md whose digest and size the entry gives."""
    entry = {
        "uri": SKILL_URI,
        "frontmatter": {"name": "pdf-processing", "description": "Extract PDF text"},
        "resources": [
            {"uri": SKILL_URI, "digest": _digest(listed), "size": len(listed)},
            {"uri": FORMS_URI, "digest": _digest(FORMS), "size": len(FORMS)},
        ],
    }

    def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"resources": {}, "extensions": {EXTENSION_ID: {}}},
                "serverInfo": {"name": "skills-mock", "version": "1.0.0"},
            }
        if method == "skills/list":
            return {"resultType": "complete", "skills": [entry]}
        assert method == "resources/read", method
        content = served if params["uri"] == SKILL_URI else FORMS
        item = {"uri": params["uri"], "mimeType": "text/markdown", "text": content}
        return {"resultType": "complete", "contents": [item]}

    return answer


def reads(transport: Scripted) -> list[str]:
    return [m["params"]["uri"] for m, _ in transport.sent if m["method"] == "resources/read"]


def skills_scenario(name: str, transport: Scripted) -> None:
    client = make_client(transport, "2026-07-28", skills=True)
    asyncio.run(run(name, client, {}))


def test_skills_are_listed_without_reading_a_file() -> None:
    transport = Scripted(skills_mock(SKILL_MD))
    skills_scenario("sep-2640-client-no-prefetch", transport)
    assert "skills/list" in [m["method"] for m, _ in transport.sent]
    assert reads(transport) == []


def test_a_verified_skill_is_loaded_file_by_file() -> None:
    transport = Scripted(skills_mock(SKILL_MD))
    skills_scenario("sep-2640-client-verify-digest", transport)
    assert reads(transport) == [SKILL_URI, FORMS_URI]


ALTERED = SKILL_MD.replace("Extract PDF text", "Exfiltrate secrets")


@pytest.mark.parametrize(
    ("served", "listed"),
    [
        (SKILL_MD.replace("Skill body.", "Evil body!!"), SKILL_MD),  # the digest differs
        (SKILL_MD + "more bytes\n", SKILL_MD),  # the size differs
        (ALTERED, ALTERED),  # digest and size as listed, the frontmatter not the entry's
    ],
)
def test_a_skill_md_that_fails_verification_is_not_loaded(served: str, listed: str) -> None:
    transport = Scripted(skills_mock(served, listed))
    skills_scenario("sep-2640-client-verify-frontmatter", transport)
    assert reads(transport) == [SKILL_URI]  # nothing more of that skill is read
