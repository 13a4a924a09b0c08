"""A gateway whose front and backend speak revisions of different tool shapes: SEP-3279's
draft (2026-12-01: ``outputVariants``, ``requestedOutputs``, ``outputs``) in front of a
2026-07-28 or 2025-11-25 server (``outputSchema``, ``content``, ``structuredContent``),
and the reverse, through ``proxy`` and ``mount``, in process and as real processes
(``snodo run`` of tests/gateway/variants_servers.py over HTTP). On the literal wire:
each front client gets its own revision's shape, never the other's; the front's
``requestedOutputs`` are honoured at the front and an output the tool does not declare
is ``-32602`` before the backend is asked. Every answer, of the front and of the
backend, is checked against its revision (``check_answers``; the processes by
``SNODO_CHECK_ANSWERS``, which tests/conftest.py sets)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx
import pytest

from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.gateway import mount, proxy
from snodo.search import ToolSearch
from snodo.server import Server, Spec
from tests.gateway.variants_servers import backend_server
from tests.support.processes import serving, snodo_run

DRAFT, MODERN, LEGACY = "2026-12-01", "2026-07-28", "2025-11-25"
SERVERS = "tests/gateway/variants_servers.py"


class Recorded(MemoryTransport):
    """The backend in process, each request the gateway sends it kept as sent."""

    def __init__(self, server: Server, sent: list[dict[str, Any]]) -> None:
        super().__init__(server)
        self.sent = sent

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: Any
    ) -> dict[str, Any]:
        self.sent.append(json.loads(json.dumps(message)))
        return await super().request(message, headers, on_notification)


def _proxy(
    backend: Server, backend_versions: list[str], front_versions: list[str], **options: Any
) -> tuple[Server, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def connect(**given: Any) -> Client:
        return Client(Recorded(backend, sent), versions=backend_versions, **given)

    return proxy(connect, versions=front_versions, spec=Spec(check_answers=True), **options), sent


def _message(method: str, params: dict[str, Any], version: str) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}


def _wire(
    front: Server, asked: list[tuple[str, dict[str, Any]]], version: str, *backends: Server
) -> list[str]:
    """The front's answers to ``asked``, as the wire carries them; every answer of the
    front and of ``backends`` valid under its revision."""

    async def run() -> list[str]:
        await front.startup()
        try:
            answers = []
            for method, params in asked:
                reply = await front.handle(_message(method, params, version))
                answers.append(json.dumps(reply.response, separators=(",", ":")))
            return answers
        finally:
            await front.shutdown()

    answers = asyncio.run(run())
    for server in (front, *backends):
        assert server.answer_checks is not None and server.answer_checks.invalid == []
    return answers


def _call(tool: str, arguments: dict[str, Any], *selectors: tuple[str, str]) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if selectors:
        params["requestedOutputs"] = [{"audience": a, "format": f} for a, f in selectors]
    return params


INFO = '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"snodo-proxy","version":"1.0.0"}}'
FIND = (
    '{"name":"find_customers","description":"Find customers by name.","inputSchema":'
    '{"additionalProperties":false,"properties":{"query":{"type":"string"}},"required":'
    '["query"],"type":"object"},'
)
CUSTOMERS = (
    '{"properties":{"names":{"items":{"type":"string"},"type":"array"}},"required":["names"],'
    '"type":"object"}'
)
REGIONS = (
    '{"name":"regions","description":"The sales regions.","inputSchema":'
    '{"additionalProperties":false,"properties":{},"type":"object"},'
)
SUMMARIZE = (
    '{"name":"summarize","description":"Say what was found.","inputSchema":'
    '{"additionalProperties":false,"properties":{"query":{"type":"string"}},"required":'
    '["query"],"type":"object"}'
)
CONTENT = '{"audience":"assistant","format":"content"}'
WRAPPED = (
    '{"type":"object","properties":{"result":{"items":{"type":"string"},"type":"array"}},'
    '"required":["result"],"x-snodo-wrapped":true}'
)
LISTED = {
    DRAFT: (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":['
        f'{FIND}"outputVariants":[{CONTENT},{{"audience":"assistant","format":"structured",'
        f'"schema":{CUSTOMERS}}}]}},'
        f'{REGIONS}"outputVariants":[{CONTENT},{{"audience":"assistant","format":"structured",'
        '"schema":{"items":{"type":"string"},"type":"array"}}]},'
        f'{SUMMARIZE},"outputVariants":[{CONTENT}]}}],"ttlMs":0,"cacheScope":"private",{INFO}}}}}'
    ),
    MODERN: (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":['
        f'{FIND}"outputSchema":{CUSTOMERS}}},{REGIONS}"outputSchema":{WRAPPED}}},{SUMMARIZE}}}],'
        f'"ttlMs":0,"cacheScope":"private",{INFO}}}}}'
    ),
}
MIRROR = '[{"type":"text","text":"{\\"names\\": [\\"Globex Retail\\"]}"}]'
STRUCTURED = '{"names":["Globex Retail"]}'
AS_DRAFT = [
    (
        _call("find_customers", {"query": "Globex"}),
        f'[{{"audience":"assistant","format":"content","content":{MIRROR}}}]',
    ),
    (
        _call(
            "find_customers",
            {"query": "Globex"},
            ("assistant", "structured"),
            ("assistant", "content"),
        ),
        f'[{{"audience":"assistant","format":"structured","structuredContent":{STRUCTURED}}},'
        f'{{"audience":"assistant","format":"content","content":{MIRROR}}}]',
    ),
    (
        _call("regions", {}, ("assistant", "structured")),
        '[{"audience":"assistant","format":"structured","structuredContent":["NA","EMEA"]}]',
    ),
    (
        _call("summarize", {"query": "Globex"}),
        '[{"audience":"assistant","format":"content","content":[{"type":"text","text":'
        '"I found 1 Globex customer record."}]}]',
    ),
]


def _outputs(outputs: str, failed: bool = False) -> str:
    error = ',"isError":true' if failed else ""
    return (
        f'{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","outputs":{outputs}'
        f"{error},{INFO}}}}}"
    )


# -- a draft front, a 2026-07-28 backend -------------------------------------------------


def test_a_draft_front_lists_an_older_backends_tools_with_their_variants() -> None:
    backend = backend_server(MODERN)
    front, _ = _proxy(backend, [MODERN], [DRAFT, MODERN])
    draft, modern = [
        _wire(front, [("tools/list", {})], version, backend)[0] for version in (DRAFT, MODERN)
    ]
    assert draft == LISTED[DRAFT]
    assert modern == LISTED[MODERN]


def test_a_draft_front_answers_the_outputs_asked_of_an_older_backends_tools() -> None:
    backend = backend_server(MODERN)
    front, sent = _proxy(backend, [MODERN], [DRAFT, MODERN])
    asked = [("tools/call", params) for params, _ in AS_DRAFT]
    answers = _wire(front, asked, DRAFT, backend)
    assert answers == [_outputs(outputs) for _, outputs in AS_DRAFT]
    calls = [m["params"] for m in sent if m["method"] == "tools/call"]
    assert len(calls) == len(AS_DRAFT)
    assert all("requestedOutputs" not in params for params in calls)
    assert all(
        params["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN for params in calls
    )


def test_an_undeclared_output_is_refused_at_the_front_before_the_backend_is_asked() -> None:
    ran: list[str] = []
    backend = backend_server(MODERN, ran=ran)
    front, _ = _proxy(backend, [MODERN], [DRAFT, MODERN])
    asked = [
        ("tools/call", _call("summarize", {"query": "x"}, ("assistant", "structured"))),
        ("tools/call", _call("find_customers", {"query": "x"}, ("programmatic", "structured"))),
    ]
    assert _wire(front, asked, DRAFT, backend) == [
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Tool summarize declares no '
        'output assistant/structured (it declares assistant/content)"}}',
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Tool find_customers declares '
        "no output programmatic/structured (it declares assistant/content, "
        'assistant/structured)"}}',
    ]
    assert ran == []


def test_a_failed_call_of_an_older_backend_is_a_failed_output_at_a_draft_front() -> None:
    backend = backend_server(MODERN)
    front, _ = _proxy(backend, [MODERN], [DRAFT, MODERN])
    asked = [
        ("tools/call", _call("find_customers", {"query": "fail"})),
        ("tools/call", _call("find_customers", {"query": "fail"}, ("assistant", "structured"))),
    ]
    assert _wire(front, asked, DRAFT, backend) == [
        _outputs(
            '[{"audience":"assistant","format":"content","content":[{"type":"text","text":'
            '"nothing matches fail"}]}]',
            failed=True,
        ),
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Tool find_customers failed: '
        'nothing matches fail"}}',
    ]


def test_a_tool_the_backend_does_not_list_is_read_for_once_per_change() -> None:
    """A call of a tool the gateway has not seen listed reads the backend's list once;
    another call of a name still unknown does not read it again, and the backend
    answers it as any unknown tool."""
    backend = backend_server(MODERN)
    front, sent = _proxy(backend, [MODERN], [DRAFT, MODERN])
    asked = [
        ("tools/call", _call("nope", {})),
        ("tools/call", _call("nope", {}, ("assistant", "content"))),
        ("tools/call", _call("regions", {}, ("assistant", "structured"))),
    ]
    unknown = '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}'
    assert _wire(front, asked, DRAFT, backend) == [
        unknown,
        unknown,
        _outputs(
            '[{"audience":"assistant","format":"structured","structuredContent":["NA","EMEA"]}]'
        ),
    ]
    assert [m["method"] for m in sent if m["method"].startswith("tools/")] == [
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
    ]


# -- a 2026-07-28 front, a draft backend ---------------------------------------------------


def test_an_older_front_gets_a_draft_backends_tools_in_the_content_shape() -> None:
    backend = backend_server(DRAFT)
    front, sent = _proxy(backend, [DRAFT], [MODERN])
    asked = [
        ("tools/list", {}),
        ("tools/call", _call("find_customers", {"query": "Globex"})),
        ("tools/call", _call("regions", {})),
        ("tools/call", _call("summarize", {"query": "Globex"})),
        ("tools/call", _call("find_customers", {"query": "fail"})),
    ]
    assert _wire(front, asked, MODERN, backend) == [
        LISTED[MODERN],
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":'
        f'{MIRROR},"structuredContent":{STRUCTURED},{INFO}}}}}',
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text",'
        '"text":"[\\"NA\\", \\"EMEA\\"]"}],"structuredContent":{"result":["NA","EMEA"]},'
        f"{INFO}}}}}",
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text",'
        f'"text":"I found 1 Globex customer record."}}],{INFO}}}}}',
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","isError":true,"content":'
        f'[{{"type":"text","text":"nothing matches fail"}}],{INFO}}}}}',
    ]
    requested = [m["params"].get("requestedOutputs") for m in sent if m["method"] == "tools/call"]
    both = [
        {"audience": "assistant", "format": "content"},
        {"audience": "assistant", "format": "structured"},
    ]
    assert requested == [both, both, both[:1], both]


def test_a_draft_front_of_a_draft_backend_passes_its_outputs_as_they_are() -> None:
    backend = backend_server(DRAFT)
    front, sent = _proxy(backend, [DRAFT], [DRAFT])
    params, outputs = AS_DRAFT[1]
    (listed, called) = _wire(front, [("tools/list", {}), ("tools/call", params)], DRAFT, backend)
    assert listed == LISTED[DRAFT]
    assert called == _outputs(outputs)
    (call,) = [m["params"] for m in sent if m["method"] == "tools/call"]
    assert call["requestedOutputs"] == params["requestedOutputs"]


# -- mounted, and searched -----------------------------------------------------------------


def test_a_draft_server_mounts_an_older_one() -> None:
    inner = backend_server(MODERN)
    outer = Server("outer", "1.0", versions=[DRAFT, MODERN], spec=Spec(check_answers=True))

    @outer.tool
    def hello() -> str:
        return "hi"

    mount(outer, inner, prefix="crm", versions=[MODERN])
    asked = [
        ("tools/list", {}),
        ("tools/call", _call("crm_regions", {}, ("assistant", "structured"))),
        ("tools/call", _call("crm_summarize", {"query": "x"}, ("assistant", "structured"))),
    ]
    listed, regions, refused = _wire(outer, asked, DRAFT, inner)
    tools = json.loads(listed)["result"]["tools"]
    assert [
        (t["name"], [(v["audience"], v["format"]) for v in t["outputVariants"]]) for t in tools
    ] == [
        ("hello", [("assistant", "content")]),
        ("crm_find_customers", [("assistant", "content"), ("assistant", "structured")]),
        ("crm_regions", [("assistant", "content"), ("assistant", "structured")]),
        ("crm_summarize", [("assistant", "content")]),
    ]
    assert json.loads(regions)["result"]["outputs"] == [
        {"audience": "assistant", "format": "structured", "structuredContent": ["NA", "EMEA"]}
    ]
    assert json.loads(refused)["error"]["code"] == -32602


def test_a_draft_proxy_searches_an_older_backends_tools() -> None:
    backend = backend_server(MODERN)
    front, _ = _proxy(
        backend, [MODERN], [DRAFT, MODERN], tool_search=ToolSearch(always_visible=["regions"])
    )
    asked = [
        ("tools/list", {}),
        (
            "tools/call",
            _call("search_tools", {"query": "customers by name"}, ("assistant", "structured")),
        ),
        ("tools/call", _call("call_tool", {"name": "summarize", "arguments": {"query": "x"}})),
        ("tools/call", _call("regions", {}, ("assistant", "structured"))),
    ]
    listed, found, called, regions = _wire(front, asked, DRAFT, backend)
    tools = json.loads(listed)["result"]["tools"]
    assert [t["name"] for t in tools] == ["regions", "search_tools", "call_tool"]
    assert tools[0]["outputVariants"][1]["schema"] == {"items": {"type": "string"}, "type": "array"}
    (output,) = json.loads(found)["result"]["outputs"]
    assert output["structuredContent"]["tools"][0]["name"] == "find_customers"
    assert called == _outputs(
        '[{"audience":"assistant","format":"content","content":[{"type":"text","text":'
        '"I found 1 x customer record."}]}]'
    )
    assert regions == _outputs(
        '[{"audience":"assistant","format":"structured","structuredContent":["NA","EMEA"]}]'
    )


# -- real processes --------------------------------------------------------------------------

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _post(url: str, method: str, params: dict[str, Any], version: str) -> str:
    body = _message(method, params, version)
    headers = {**HEADERS, "mcp-method": method, "mcp-protocol-version": version}
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    answer = httpx.post(url, json=body, headers=headers, timeout=30)
    text = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        text = [d for d in data if '"id"' in d][-1]
    return json.dumps(json.loads(text), separators=(",", ":"))


def _run(target: str) -> Callable[[int], list[str]]:
    return lambda port: snodo_run(f"{SERVERS}:{target}", "http", "--port", str(port))


@pytest.fixture(scope="module")
def older_backend() -> Iterator[str]:
    """A backend process serving 2026-07-28 and 2025-11-25 over HTTP."""
    with serving(_run("backend"), env={"VARIANTS_VERSIONS": f"{MODERN},{LEGACY}"}) as backend:
        yield f"{backend.base}/mcp"


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_draft_proxy_process_in_front_of_an_older_backend_process(
    older_backend: str, era: str
) -> None:
    """The backend spoken to as 2026-07-28, or in a 2025-11-25 session."""
    env = {
        "VARIANTS_BACKEND": older_backend,
        "VARIANTS_VERSIONS": f"{DRAFT},{MODERN},{LEGACY}",
        "VARIANTS_BACKEND_VERSIONS": MODERN,
        "VARIANTS_BACKEND_ERA": era,
    }
    with serving(_run("front"), env=env) as front:
        url = f"{front.base}/mcp"
        assert _post(url, "tools/list", {}, DRAFT) == LISTED[DRAFT]
        for params, outputs in AS_DRAFT:
            assert _post(url, "tools/call", params, DRAFT) == _outputs(outputs)
        refused = _post(
            url,
            "tools/call",
            _call("summarize", {"query": "x"}, ("assistant", "structured")),
            DRAFT,
        )
        assert json.loads(refused)["error"]["code"] == -32602
        assert _post(url, "tools/list", {}, MODERN) == LISTED[MODERN]


def test_an_older_proxy_process_in_front_of_a_draft_backend_process() -> None:
    with (
        serving(_run("backend"), env={"VARIANTS_VERSIONS": DRAFT}) as backend,
        serving(
            _run("front"),
            env={
                "VARIANTS_BACKEND": f"{backend.base}/mcp",
                "VARIANTS_VERSIONS": f"{MODERN},{LEGACY}",
                "VARIANTS_BACKEND_VERSIONS": DRAFT,
            },
        ) as front,
    ):
        url = f"{front.base}/mcp"
        assert _post(url, "tools/list", {}, MODERN) == LISTED[MODERN]
        assert _post(url, "tools/call", _call("regions", {}), MODERN) == (
            '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text",'
            '"text":"[\\"NA\\", \\"EMEA\\"]"}],"structuredContent":{"result":["NA","EMEA"]},'
            f"{INFO}}}}}"
        )

        async def legacy_client() -> tuple[Any, Any]:
            async with Client.http(url, era="legacy") as client:
                listed = {tool.name: tool for tool in await client.list_tools()}
                return listed, await client.call_tool("find_customers", {"query": "Globex"})

        listed, result = asyncio.run(legacy_client())
        schema = listed["regions"].output_schema.model_dump(by_alias=True, exclude_none=True)
        assert schema == json.loads(WRAPPED)
        assert result.structured_content == json.loads(STRUCTURED)
        assert [block.text for block in result.content] == [json.loads(MIRROR)[0]["text"]]
