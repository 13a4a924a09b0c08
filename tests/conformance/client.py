"""The client the official conformance runner drives, built on snodo.client.Client.

    python tests/conformance/client.py <server url>

The runner (``conformance client --command ... --scenario NAME``) starts a mock server,
then this program with the mock's URL as the last argument and the scenario in the
environment: ``MCP_CONFORMANCE_SCENARIO`` (which flow to run),
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the wire revision: 2026-07-28 is spoken
statelessly, 2025-11-25 and the other initialize-based revisions through a legacy
session, chosen up front since the runner names the revision) and, for some
scenarios, ``MCP_CONFORMANCE_CONTEXT`` (JSON, e.g. the tool calls http-custom-headers
wants made). The program exits 0 when its flow completed as the scenario expects, 1
otherwise; the runner's own checks on what it saw on the wire decide the scenario.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from snodo.client import Client, Flow
from snodo.client.era import LEGACY_PROTOCOL_VERSIONS
from snodo.client.transports import ClientTransport, HttpTransport
from snodo.extensions.skills import SkillsClient, VerificationFailed
from snodo.oauth import ClientKey, CrossAppAccess, HeadlessUserAgent, OAuth, WorkloadIdentity
from snodo_wire.protocol import SUPPORTED_PROTOCOL_VERSIONS

__all__ = [
    "AUTH_SCENARIOS",
    "SCENARIOS",
    "ScenarioFailed",
    "answer_elicitation",
    "main",
    "make_client",
    "make_oauth",
    "run",
]

Scenario = Callable[[Client, Mapping[str, Any]], Awaitable[None]]


class ScenarioFailed(Exception):
    """The server did not behave as the scenario's flow needs."""


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ScenarioFailed(message)


# -- answering input requests -----------------------------------------------------------


def answer_elicitation(params: dict[str, Any]) -> dict[str, Any]:
    """Accept a form elicitation as a user who changes nothing would: every field
    with a default takes it (SEP-1034), every other boolean field is confirmed.

    The runner's MRTR mock asks ``{confirmed: boolean}``; other fields without a
    default are left out, which a form may do for optional fields.
    """
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    content: dict[str, Any] = {}
    for name, prop in (properties or {}).items():
        if not isinstance(prop, Mapping):
            continue
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("type") == "boolean":
            content[name] = True
    return {"action": "accept", "content": content}


def _no_roots(_params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": []}


def _dump(result: Any) -> dict[str, Any]:
    """A result model as its wire JSON (fields the server left out stay out)."""
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True)
    return dumped


def _answers(flow: Flow) -> dict[str, Any]:
    """The answers to a paused flow's elicitation requests (the only kind asked here)."""
    answers: dict[str, Any] = {}
    for key, request in (_dump(flow.result).get("inputRequests") or {}).items():
        _expect(
            request.get("method") == "elicitation/create",
            f"unexpected input request {key!r}: {request.get('method')!r}",
        )
        answers[key] = answer_elicitation(dict(request.get("params") or {}))
    return answers


# -- the scenarios --------------------------------------------------------------------------


def _text(result: Any) -> str:
    return " ".join(str(c.get("text", "")) for c in _dump(result).get("content") or [])


def _failed(result: Any) -> bool:
    return _dump(result).get("isError") is True


async def _list_tool_names(client: Client) -> list[str]:
    return [tool.name for tool in await client.list_tools()]


async def tools_call(client: Client, _context: Mapping[str, Any]) -> None:
    """tools/list, then add_numbers {a: 2, b: 3}."""
    _expect("add_numbers" in await _list_tool_names(client), "add_numbers is not listed")
    result = await client.call_tool("add_numbers", {"a": 2, "b": 3})
    _expect(not _failed(result), f"add_numbers failed: {_text(result)}")
    _expect("5" in _text(result), f"add_numbers did not add: {_text(result)}")


async def request_metadata(client: Client, _context: Mapping[str, Any]) -> None:
    """server/discover (the mock rejects the first POST with -32022 and the client
    retries with a version from ``supported``), then tools/list."""
    discovered = await client.discover()
    versions = discovered.supported_versions
    _expect(client.protocol_version in versions, f"{client.protocol_version} not in {versions}")
    await client.list_tools()


async def request_state(client: Client, _context: Mapping[str, Any]) -> None:
    """SEP-2322: echo requestState exactly, keep flows apart, omit absent state, and
    take a result without resultType as complete."""
    names = await _list_tool_names(client)
    for name in ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state"):
        _expect(name in names, f"{name} is not listed")

    # Pause the stateful flow, make an unrelated call, then resume: the retry carries
    # the answers, the exact requestState, and a fresh JSON-RPC id.
    paused = await client.call_tool("test_mrtr_echo_state", {}, manual=True)
    _expect(isinstance(paused, Flow), "test_mrtr_echo_state did not ask for input")
    assert isinstance(paused, Flow)
    _expect("requestState" in _dump(paused.result), "test_mrtr_echo_state sent no requestState")
    unrelated = await client.call_tool("test_mrtr_unrelated", {})
    _expect(not isinstance(unrelated, Flow), "test_mrtr_unrelated asked for input")
    done = await client.resume(paused, _answers(paused))
    _expect(not isinstance(done, Flow), "test_mrtr_echo_state still asked for input")
    _expect(not _failed(done), f"test_mrtr_echo_state failed: {_text(done)}")

    # No requestState in the InputRequiredResult: none in the retry either.
    paused = await client.call_tool("test_mrtr_no_state", {}, manual=True)
    _expect(isinstance(paused, Flow), "test_mrtr_no_state did not ask for input")
    assert isinstance(paused, Flow)
    _expect("requestState" not in _dump(paused.result), "test_mrtr_no_state sent a requestState")
    done = await client.resume(paused, _answers(paused))
    _expect(not isinstance(done, Flow), "test_mrtr_no_state still asked for input")

    # A result without resultType is complete (an older server's result): no retry.
    if "test_mrtr_no_result_type" in names:
        await client.call_tool("test_mrtr_no_result_type", {})


async def standard_headers(client: Client, _context: Mapping[str, Any]) -> None:
    """Every method that carries Mcp-Method, and each of the three that carry Mcp-Name."""
    for name in await _list_tool_names(client):
        await client.call_tool(name, {})
    for resource in await client.list_resources():
        await client.read_resource(resource.uri)
    for prompt in await client.list_prompts():
        await client.get_prompt(prompt.name)


async def custom_headers(client: Client, context: Mapping[str, Any]) -> None:
    """tools/list (for the x-mcp-header annotations), then each call the context names,
    with exactly its arguments."""
    names = await _list_tool_names(client)
    calls = context.get("toolCalls")
    _expect(isinstance(calls, list) and bool(calls), "MCP_CONFORMANCE_CONTEXT has no toolCalls")
    for call in calls or []:
        name = str(call["name"])
        _expect(name in names, f"{name} is not listed (or was dropped as invalid)")
        await client.call_tool(name, call.get("arguments") or {})


# Arguments for the tools of http-invalid-tool-headers (only valid_tool should survive).
_SAMPLES: dict[str, Any] = {"region": "us-west1"}
_BY_TYPE: dict[str, Any] = {"string": "sample", "integer": 1, "number": 1.5, "boolean": True}


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A value for each required property: a known sample, else one of its type."""
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = properties.get(name) or {}
        arguments[name] = _SAMPLES.get(name, _BY_TYPE.get(str(prop.get("type")), "sample"))
    return arguments


async def invalid_tool_headers(client: Client, _context: Mapping[str, Any]) -> None:
    """tools/list drops the tools whose x-mcp-header use is invalid; call the rest."""
    tools = await client.list_tools()
    names = [tool.name for tool in tools]
    _expect("valid_tool" in names, f"valid_tool was dropped: kept {names}")
    for tool in tools:
        await client.call_tool(tool.name, sample_arguments(_dump(tool)["inputSchema"]))


async def ref_no_deref(client: Client, _context: Mapping[str, Any]) -> None:
    """tools/list only; the $refs in the schema stay as they are (never fetched)."""
    _expect("lookup_user" in await _list_tool_names(client), "lookup_user is not listed")


async def initialize(client: Client, _context: Mapping[str, Any]) -> None:
    """2025-11-25: the handshake (initialize, initialized), then tools/list."""
    await client.list_tools()
    _expect(client.era == "legacy", f"the session is {client.era}, not legacy")


async def elicitation_defaults(client: Client, _context: Mapping[str, Any]) -> None:
    """2025-11-25: a tool whose server asks an elicitation with defaults mid-call; the
    answer carries every default (SEP-1034)."""
    name = "test_client_elicitation_defaults"
    _expect(name in await _list_tool_names(client), f"{name} is not listed")
    result = await client.call_tool(name, {})
    _expect("Elicitation completed" in _text(result), f"{name}: {_text(result)}")


async def sse_retry(client: Client, _context: Mapping[str, Any]) -> None:
    """2025-11-25: the server closes the call's stream before answering; the client
    waits the stream's retry delay and resumes with GET and Last-Event-ID."""
    _expect("test_reconnection" in await _list_tool_names(client), "test_reconnection?")
    result = await client.call_tool("test_reconnection", {})
    _expect("completed" in _text(result), f"test_reconnection: {_text(result)}")


async def skills_no_prefetch(client: Client, _context: Mapping[str, Any]) -> None:
    """SEP-2640: list the skills and load none, so no file is read (not on connection,
    not on listing)."""
    _expect(bool(await SkillsClient(client).list_skills()), "skills/list listed no skill")


async def skills_verified(client: Client, _context: Mapping[str, Any]) -> None:
    """SEP-2640: load each listed skill: its SKILL.md read and verified against the
    entry (digest, size, frontmatter), then its other files only when it was. The
    runner's server serves a SKILL.md that fails one check: it is refused, and nothing
    more of that skill is read."""
    skills = SkillsClient(client)
    listed = await skills.list_skills()
    _expect(bool(listed), "skills/list listed no skill")
    for skill in listed:
        try:
            await skills.read_skill_file(skill)
        except VerificationFailed as refused:
            print(f"refused {skill.uri}: {refused}")
            continue
        for item in skill.resources if isinstance(skill.resources, list) else []:
            if item.uri != skill.uri:
                await skills.read_skill_file(skill, item.uri)


SCENARIOS: dict[str, Scenario] = {
    "tools_call": tools_call,
    "request-metadata": request_metadata,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": ref_no_deref,
    "initialize": initialize,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "sep-2640-client-no-prefetch": skills_no_prefetch,
    "sep-2640-client-verify-digest": skills_verified,
    "sep-2640-client-verify-size": skills_verified,
    "sep-2640-client-verify-frontmatter": skills_verified,
}


# -- running ----------------------------------------------------------------------------


def make_client(
    transport: ClientTransport, protocol_version: str | None = None, *, skills: bool = False
) -> Client:
    """The client every scenario uses: form elicitation (accepting) and roots (none)
    declared, so the capability checks see plain objects, and the Skills extension for
    its scenarios. A legacy revision opens a legacy session; a modern one is spoken
    without probing."""
    options: dict[str, Any] = {}
    if protocol_version in LEGACY_PROTOCOL_VERSIONS:
        options["era"] = "legacy"
    elif protocol_version is not None:
        options["protocol_version"] = protocol_version
        options["era"] = "modern"
    client = Client(
        transport,
        name="snodo-conformance-client",
        version="1.0.0",
        elicitation=answer_elicitation,
        roots=_no_roots,
        **options,
    )
    if skills:  # declared from the start, as the scenarios' servers expect
        SkillsClient(client)
    return client


# -- authorization ----------------------------------------------------------------------

# The Client ID Metadata Document URL the runner's auth mocks expect as client_id when
# the authorization server accepts URL client ids (auth/basic-cimd).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def make_oauth(scenario: str, context: Mapping[str, Any]) -> OAuth:
    """Authorization for an ``auth/*`` scenario: the headless user agent, this
    program's metadata document URL, and the credentials the context hands over
    (pre-registered ones, or a machine client's for the client credentials grant: a
    secret, or a private key for ``private_key_jwt``, whose assertion the runner's
    authorization server wants addressed to its issuer). The DPoP scenarios bind the
    tokens to a key; the workload identity and enterprise-managed ones present a JWT
    with the jwt-bearer grant (``jwt_bearer``)."""
    client_id = context.get("client_id")
    client_secret = context.get("client_secret")
    pem = context.get("private_key_pem")
    key = None
    if pem:
        algorithm = context.get("signing_algorithm")
        key = ClientKey(
            str(pem), algorithm=str(algorithm) if algorithm else None, audience="issuer"
        )
    options: dict[str, Any] = {}
    if scenario.startswith("auth/client-credentials"):
        options["grant"] = "client_credentials"
    elif scenario in JWT_BEARER_SCENARIOS:
        options["grant"] = "jwt_bearer"
        options["assertion"] = jwt_bearer_assertion(scenario, context)
    return OAuth(
        user_agent=HeadlessUserAgent(),
        client_name="snodo-conformance-client",
        client_metadata_url=CLIENT_METADATA_URL,
        client_id=str(client_id) if client_id else None,
        client_secret=str(client_secret) if client_secret else None,
        client_key=key,
        dpop=scenario.startswith("auth/dpop"),
        **options,
    )


JWT_BEARER_SCENARIOS = ("auth/wif-jwt-bearer", "auth/enterprise-managed-authorization")


def jwt_bearer_assertion(scenario: str, context: Mapping[str, Any]) -> Any:
    """What the jwt-bearer grant presents: the workload's token the context hands over
    (as a platform would in a file or variable), or an ID-JAG got from the scenario's
    identity provider by exchanging the user's ID token there."""
    if scenario == "auth/wif-jwt-bearer":
        token = str(context.get("valid_jwt") or "")
        return WorkloadIdentity(token=lambda: token)
    return CrossAppAccess(
        token_endpoint=str(context.get("idp_token_endpoint") or ""),
        id_token=str(context.get("idp_id_token") or ""),
        client_id=str(context.get("idp_client_id") or ""),
    )


async def authorized(client: Client, _context: Mapping[str, Any]) -> None:
    """Every auth scenario's MCP side: tools/list, then test-tool; authorization
    (and any step-up) happens under these requests."""
    _expect("test-tool" in await _list_tool_names(client), "test-tool is not listed")
    result = await client.call_tool("test-tool", {})
    _expect(not _failed(result), f"test-tool failed: {_text(result)}")


AUTH_SCENARIOS = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
    "auth/enterprise-managed-authorization",
)
SCENARIOS.update(dict.fromkeys(AUTH_SCENARIOS, authorized))


async def run(scenario: str, client: Client, context: Mapping[str, Any]) -> None:
    flow = SCENARIOS.get(scenario)
    if flow is None:
        raise ScenarioFailed(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    async with client:
        await flow(client, context)


def main(argv: list[str], environ: Mapping[str, str]) -> int:
    if len(argv) < 2:
        print("usage: client.py <server url>", file=sys.stderr)
        return 2
    url = argv[-1]
    scenario = environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    known = (*SUPPORTED_PROTOCOL_VERSIONS, *LEGACY_PROTOCOL_VERSIONS)
    if version is not None and version not in known:
        print(f"protocol version {version} is not supported by snodo", file=sys.stderr)
        return 1
    try:
        context: Any = json.loads(environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except ValueError as exc:
        print(f"MCP_CONFORMANCE_CONTEXT is not JSON: {exc}", file=sys.stderr)
        return 1
    if not isinstance(context, dict):
        context = {}
    auth = make_oauth(scenario, context) if scenario.startswith("auth/") else None
    skills = scenario.startswith("sep-2640-")
    client = make_client(HttpTransport(url, timeout=10, auth=auth), version, skills=skills)
    try:
        asyncio.run(run(scenario, client, context))
    except Exception:
        traceback.print_exc()
        return 1
    print(f"{scenario}: done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv, os.environ))
