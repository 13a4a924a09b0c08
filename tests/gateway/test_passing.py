"""A proxy passes a backend's large result members on as their bytes
(``snodo.client.transports.passthrough``), and only where nothing between reads them.

- ``passthrough.decode`` keeps a complete result's large members as the exact bytes they
  came as, decodes what is small, ``_meta``, errors and questions, and gives every body
  it cannot vouch for to ``snodo.core.jsonrpc.decode``, whose verdict stands (property tests
  over generated results and spacing).
- A key given twice in one object means the last value on both paths: a member holding
  one is decoded, never kept (examples, and a property test over text written with
  repeated keys).
- ``snodo.core.jsonrpc.encode`` writes kept bytes as they are, ``null`` inside them
  included, and never lets a NaN elsewhere out as ``null``.
- ``snodo proxy`` in front of a server that writes its answers by hand
  (``written_backend``): the front's answer holds the backend's members byte for byte,
  with the front's id and the proxy's server info; malformed members, bytes that are
  not UTF-8 and NaN are refused as the decoding proxy refuses them; a member naming a
  key twice reaches the front as the decoding proxy writes it; a legacy front, a proxy
  with middleware and a question get decoded values.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snodo import Server
from snodo.client import Client
from snodo.client.transports import MemoryTransport, StdioTransport, passthrough
from snodo.core import jsonrpc
from snodo.core.errors import ParseError
from snodo.gateway import mount, proxy
from tests.gateway import written_backend
from tests.support.processes import Serving, serving
from tests.support.wire import request

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}


def _response(result: bytes, request_id: bytes = b"7") -> bytes:
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (request_id, result)


# -- passthrough.decode ------------------------------------------------------------------------


def test_a_complete_results_large_members_are_kept_as_the_bytes_they_came_as() -> None:
    body = _response(written_backend._ANSWERS["report"])
    message = passthrough.decode(body)
    assert message["jsonrpc"] == "2.0" and message["id"] == 7
    result = message["result"]
    assert passthrough.kept(result["content"]) and passthrough.kept(result["structuredContent"])
    assert orjson.dumps(result["content"]) == written_backend.ROWS
    assert orjson.dumps(result["structuredContent"]) == written_backend.STRUCTURED
    # What is small, and _meta, is decoded as usual.
    assert result["resultType"] == "complete" and result["isError"] is False
    assert result["_meta"] == {SERVER_INFO: {"name": "written", "version": "1.0.0"}}


def test_small_bodies_errors_questions_and_notifications_are_decoded_whole() -> None:
    small = _response(b'{"resultType":"complete","content":[{"type":"text","text":"hi"}]}')
    error = b'{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"%s"}}' % (b"x" * 5000)
    question = _response(written_backend._ANSWERS["ask"])
    note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"%s"}}' % (
        b"y" * 5000
    )
    for body in (small, error, question, note):
        assert passthrough.decode(body) == jsonrpc.decode(body)
        assert not _kept_anywhere(passthrough.decode(body))


@pytest.mark.parametrize("name", ["broken", "not-utf8", "nan"])
def test_what_jsonrpc_decode_refuses_is_refused_the_same(name: str) -> None:
    body = _response(written_backend._ANSWERS[name])
    with pytest.raises(ParseError):
        jsonrpc.decode(body)
    with pytest.raises(ParseError):
        passthrough.decode(body)


@pytest.mark.parametrize(
    "body",
    [
        _response(written_backend._ANSWERS["report"]) + b"x",  # trailing bytes
        _response(written_backend._ANSWERS["report"])[:-1],  # cut short
        _response(written_backend._ANSWERS["report"], b"1.5"),  # the caller's to refuse
        b'{"jsonrpc":"2.0","id":7,"result":[%s]}' % written_backend.ROWS,  # not an object
    ],
)
def test_bodies_msgspec_does_not_read_as_a_response_get_jsonrpc_decodes_verdict(
    body: bytes,
) -> None:
    try:
        expected: Any = jsonrpc.decode(body)
    except ParseError:
        with pytest.raises(ParseError):
            passthrough.decode(body)
        return
    assert json.loads(orjson.dumps(passthrough.decode(body))) == expected


def test_over_stdio_only_the_request_that_asked_gets_kept_members() -> None:
    transport = StdioTransport(["unused"])
    line = _response(written_backend._ANSWERS["report"], b"2")
    assert transport._decode(line) == jsonrpc.decode(line)  # nobody asked: decoded whole
    transport.passing.add(1)
    other = transport._decode(line)  # id 2 did not ask: its kept members are read back
    assert not _kept_anywhere(other) and other == jsonrpc.decode(line)
    transport.passing.add(2)
    assert passthrough.kept(transport._decode(line)["result"]["content"])


def test_a_line_end_between_tokens_is_never_kept() -> None:
    # A member that would put a message of its own on a line of a stdio front.
    injected = b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'
    content = b"[\n" + injected + b"\r\n," + written_backend.ROWS[1:]
    body = _response(b'{"resultType":"complete","content":%s}' % content)
    assert passthrough.decode(body) == jsonrpc.decode(body)
    assert not _kept_anywhere(passthrough.decode(body))
    written = jsonrpc.encode(passthrough.decode(body))
    assert b"\n" not in written and b"\r" not in written


@pytest.mark.parametrize(
    "envelope",
    [
        b'{"jsonrpc":"2.0","id":7,"error":null,"result":%s}',  # an error beside it
        b'{"jsonrpc":"2.0","id":7,"result":%s,"extra":1}',  # a key no response has
        b'{"id":7,"result":%s}',  # no jsonrpc
    ],
)
def test_an_envelope_not_exactly_a_response_is_decoded_whole(envelope: bytes) -> None:
    body = envelope % written_backend._ANSWERS["report"]
    assert passthrough.decode(body) == jsonrpc.decode(body)


def test_encode_reads_kept_bytes_back_where_orjson_cannot_write_the_answer() -> None:
    kept = orjson.Fragment(b'{"a": [1, 2]}')
    # An id beyond 64 bits: orjson refuses it, and the standard encoder writes the answer.
    message = {"jsonrpc": "2.0", "id": 2**70, "result": {"kept": kept, "n": 2**65}}
    written = jsonrpc.encode(message)
    assert json.loads(written) == {
        "jsonrpc": "2.0",
        "id": 2**70,
        "result": {"kept": {"a": [1, 2]}, "n": 2**65},
    }


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=60,
)


@settings(max_examples=150, deadline=None)
@given(
    members=st.dictionaries(st.text(min_size=1, max_size=10), _VALUES, max_size=6),
    padding=st.integers(0, 6000),
    spaced=st.booleans(),
)
def test_kept_bytes_and_decoded_members_encode_to_the_same_values(
    members: dict[str, Any], padding: int, spaced: bool
) -> None:
    members = {**members, "resultType": "complete", "padding": "p" * padding}
    text = json.dumps(members, separators=(", ", ": ") if spaced else (",", ":")).encode()
    body = _response(text)
    message = passthrough.decode(body)
    assert message == jsonrpc.decode(body) or _kept_anywhere(message)
    # What the proxy writes holds the same values, and each kept member its own bytes.
    written = jsonrpc.encode(message)
    assert json.loads(written) == json.loads(body)
    for value in message["result"].values():
        if passthrough.kept(value):
            assert len(orjson.dumps(value)) > passthrough.SMALL_MEMBER
            assert orjson.dumps(value) in text


def _kept_anywhere(message: Any) -> bool:
    result = message.get("result") if isinstance(message, dict) else None
    return isinstance(result, dict) and any(passthrough.kept(v) for v in result.values())


def _strict(text: bytes) -> Any:
    """``text`` read by a parser that refuses a key given twice in one object."""

    def pairs(found: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in found]
        assert len(set(keys)) == len(keys), f"a key given twice: {keys}"
        return dict(found)

    return json.loads(text, object_pairs_hook=pairs)


_ROWS = b"[" + b",".join(b'{"type":"text","text":"row %d"}' % n for n in range(200)) + b"]"


@pytest.mark.parametrize(
    "member",
    [
        _ROWS.replace(b'"text":"row 3"', b'"text":"hidden","text":"row 3"'),
        b'{"deep":[[{"a":1,"b":{"c":2,"c":3}}]],"rows":%s}' % _ROWS,
        _ROWS.replace(b'"text":"row 3"', b'"text":"hidden","te\\u0078t":"row 3"'),
        b'{"a\\u003ab":1,"a:b":2,"rows":%s}' % _ROWS,  # a colon escaped in a key
        b'{"k":"\\ud800","k":2,"rows":%s}' % _ROWS,  # orjson refuses the lone surrogate
    ],
)
def test_a_member_naming_a_key_twice_is_decoded_as_the_decoded_path_reads_it(
    member: bytes,
) -> None:
    body = _response(b'{"resultType":"complete","content":%s}' % member)
    message = passthrough.decode(body)
    assert not passthrough.kept(message["result"]["content"])
    assert message == jsonrpc.decode(body)
    assert b"hidden" not in jsonrpc.encode(message)
    _strict(jsonrpc.encode(message))


def test_a_member_with_objects_and_too_many_values_gets_the_decoded_paths_verdict() -> None:
    member = b'[{"a":0}' + b",0" * jsonrpc.MAX_VALUES + b"]"
    body = _response(b'{"resultType":"complete","content":%s}' % member)
    with pytest.raises(ParseError, match="too many values"):
        jsonrpc.decode(body)
    with pytest.raises(ParseError, match="too many values"):
        passthrough.decode(body)


def test_a_member_naming_a_key_twice_gets_the_decoded_paths_verdict() -> None:
    # orjson refuses the number; decoded, it is refused on either path.
    member = b'{"big":1e400,"k":1,"k":2,"rows":%s}' % _ROWS
    body = _response(b'{"resultType":"complete","content":%s}' % member)
    with pytest.raises(ParseError):
        jsonrpc.decode(body)
    with pytest.raises(ParseError):
        passthrough.decode(body)


@pytest.mark.parametrize(
    "member",
    [
        _ROWS,
        b'{"a:b":1,"a\\u003ac":2,"rows":%s}' % _ROWS,  # colons, escaped or not, no twice
        b'{"big":1e400,"rows":%s}' % _ROWS,  # a number beyond a double still passes
        b'{"k":"\\u0078","x":"a\\"b:c","rows":%s}' % _ROWS,
    ],
)
def test_a_member_without_a_key_given_twice_is_still_kept(member: bytes) -> None:
    body = _response(b'{"resultType":"complete","content":%s}' % member)
    content = passthrough.decode(body)["result"]["content"]
    assert passthrough.kept(content) and orjson.dumps(content) == member


_KEYS = st.sampled_from(["a", "b", "type", "text", "a:b"])
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5).map(lambda items: ("list", items)),
        st.lists(st.tuples(_KEYS, inner), max_size=5).map(lambda pairs: ("object", pairs)),
    ),
    max_leaves=40,
)


def _written(tree: Any) -> bytes:
    """JSON text of ``tree``, whose objects are lists of pairs: a key may come twice."""
    if isinstance(tree, tuple) and tree[0] == "list":
        return b"[" + b",".join(_written(item) for item in tree[1]) + b"]"
    if isinstance(tree, tuple):
        pairs = [json.dumps(key).encode() + b":" + _written(value) for key, value in tree[1]]
        return b"{" + b",".join(pairs) + b"}"
    return json.dumps(tree).encode()


@settings(max_examples=200, deadline=None)
@given(trees=st.lists(_TREES, min_size=1, max_size=4), padding=st.integers(0, 5000))
def test_repeated_keys_mean_the_last_value_on_either_path(trees: list[Any], padding: int) -> None:
    members = b",".join(b'"m%d":%s' % (n, _written(tree)) for n, tree in enumerate(trees))
    text = b'{"resultType":"complete","padding":"%s",%s}' % (b"p" * padding, members)
    body = _response(text)
    expected = jsonrpc.decode(body)
    written = jsonrpc.encode(passthrough.decode(body))
    assert _strict(written) == json.loads(jsonrpc.encode(expected))


# -- jsonrpc.encode ----------------------------------------------------------------------


def test_encode_writes_kept_bytes_as_they_are_null_included() -> None:
    kept = orjson.Fragment(b'{"a": null, "b": [1E2 , 2.50]}')
    message = {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": kept, "x": None}}
    written = jsonrpc.encode(message)
    assert written == (
        b'{"jsonrpc":"2.0","id":1,"result":{"structuredContent":'
        b'{"a": null, "b": [1E2 , 2.50]},"x":null}}'
    )


def test_encode_never_writes_a_nan_beside_kept_bytes_as_null() -> None:
    kept = orjson.Fragment(b'{"a": 1}')
    for bad in (math.nan, [math.inf], {"deep": [-math.inf]}):
        message = {"jsonrpc": "2.0", "id": 1, "result": {"kept": kept, "bad": bad}}
        with pytest.raises((ValueError, TypeError)):
            jsonrpc.encode(message)


# -- through snodo proxy --------------------------------------------------------------------


def _uvicorn(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "tests.gateway.written_backend:app",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]


SNODO_PROXY = [sys.executable, "-m", "snodo", "proxy", "--transport", "http", "--port"]


@pytest.fixture(scope="module")
def backend() -> Iterator[Serving]:
    with serving(_uvicorn) as server:
        yield server


@pytest.fixture(scope="module")
def front(backend: Serving) -> Iterator[Serving]:
    def command(port: int) -> list[str]:
        return [*SNODO_PROXY, str(port), f"{backend.base}/mcp"]

    with serving(command) as server:
        yield server


@pytest.fixture(scope="module")
def stdio_front() -> Iterator[Serving]:
    """``snodo proxy`` starting the hand-written server itself, over stdio."""

    def command(port: int) -> list[str]:
        backend = [sys.executable, "-m", "tests.gateway.written_backend"]
        return [*SNODO_PROXY, str(port), "--", *backend]

    with serving(command) as server:
        yield server


def _call(front: Serving, name: str, request_id: Any = "front-7") -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": {}, "_meta": META},
    }
    headers = {**HEADERS, "mcp-name": name}
    return httpx.post(f"{front.base}/mcp", json=body, headers=headers, timeout=30)


@pytest.mark.parametrize("over", ["http", "stdio"])
def test_the_fronts_answer_holds_the_backends_members_byte_for_byte(
    over: str, request: pytest.FixtureRequest
) -> None:
    front = request.getfixturevalue("front" if over == "http" else "stdio_front")
    answer = _call(front, "report")
    assert answer.status_code == 200, answer.text
    raw = answer.content
    # Spaces, 1E2, 2.50 and an escaped accent, as the backend wrote them: never decoded
    # and encoded again.
    assert raw.count(written_backend.ROWS) == 2  # content, and inside structuredContent
    assert written_backend.STRUCTURED in raw
    message = json.loads(raw)
    assert message["id"] == "front-7"
    result = message["result"]
    assert result["resultType"] == "complete" and result["isError"] is False
    assert result["_meta"][SERVER_INFO]["name"] == "snodo-proxy"
    assert result["content"][7]["text"] == "row 7 é é"
    assert result["structuredContent"]["sizes"] == [100.0, 2.5, None, -0.0]


@pytest.mark.parametrize("name", ["broken", "not-utf8", "nan"])
def test_a_malformed_member_is_refused_and_the_proxy_serves_on(front: Serving, name: str) -> None:
    # Over stdio a line that is not JSON answers nothing (the request times out), as
    # before: not tried here.
    answer = _call(front, name)
    error = json.loads(answer.content)["error"]
    assert error == {"code": -32603, "message": "The server behind this proxy did not answer"}
    assert _call(front, "report").status_code == 200


@pytest.mark.parametrize("over", ["http", "stdio"])
def test_a_member_naming_a_key_twice_reaches_the_front_as_decoding_writes_it(
    over: str, request: pytest.FixtureRequest
) -> None:
    front = request.getfixturevalue("front" if over == "http" else "stdio_front")
    answer = _call(front, "duplicate")
    assert answer.status_code == 200, answer.text
    assert written_backend.HIDDEN not in answer.content
    result = _strict(answer.content)["result"]
    assert result["content"][3]["text"] == "row 3 é é"
    assert result["content"] == json.loads(written_backend.ROWS)
    # The member without one still passes as the backend wrote it.
    assert written_backend.STRUCTURED in answer.content


def test_a_large_question_is_decoded_and_sealed_into_the_proxys_state(front: Serving) -> None:
    answer = _call(front, "ask")
    result = json.loads(answer.content)["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"]["q"]["params"]["message"] == "m" * 5000
    assert result["requestState"] != "s-1"  # the proxy's own, the backend's inside it


def test_a_legacy_front_gets_the_result_decoded_and_in_its_own_shape(front: Serving) -> None:
    url = f"{front.base}/mcp"
    legacy = {"accept": HEADERS["accept"], "content-type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "legacy", "version": "1"},
        },
    }
    with httpx.Client(timeout=30) as http:
        opened = http.post(url, json=init, headers=legacy)
        session = {**legacy, "mcp-session-id": opened.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(url, json=note, headers=session)
        params = {"name": "report", "arguments": {}}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        answer = http.post(url, json=call, headers=session)
    text = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    result = json.loads(text)["result"]
    assert "resultType" not in result and SERVER_INFO not in result.get("_meta", {})
    assert json.loads(written_backend.ROWS) == result["content"]


def test_in_process_clients_and_mounts_get_values(backend: Serving) -> None:
    url = f"{backend.base}/mcp"

    async def scenario() -> tuple[Any, Any]:
        behind = proxy(lambda **options: Client.http(url, **options))
        async with Client(MemoryTransport(behind)) as client:
            direct = await client.call_tool("report", {})
        outer = Server("outer", "1.0.0")
        mount(outer, proxy(lambda **options: Client.http(url, **options)), prefix="w")
        async with Client(MemoryTransport(outer)) as client:
            mounted = await client.call_tool("w_report", {})
        return direct, mounted

    direct, mounted = asyncio.run(scenario())
    rows = json.loads(written_backend.ROWS)
    for result in (direct, mounted):
        assert [block.model_dump(exclude_none=True) for block in result.content] == rows


def test_in_process_kept_bytes_reach_the_answer_and_middleware_turns_them_off(
    backend: Serving,
) -> None:
    url = f"{backend.base}/mcp"
    seen: list[Any] = []

    async def answer(with_middleware: bool) -> dict[str, Any]:
        server = proxy(lambda **options: Client.http(url, **options))
        if with_middleware:

            @server.middleware
            async def look(ctx: Any, call_next: Any) -> Any:
                outcome = await call_next(ctx)
                seen.append(outcome["content"])
                return outcome

        await server.startup()
        try:
            message = request("tools/call", {"name": "report", "arguments": {}})
            reply = await server.handle(message)
            assert reply.response is not None
            result: dict[str, Any] = reply.response["result"]
            return result
        finally:
            await server.shutdown()

    plain = asyncio.run(answer(with_middleware=False))
    assert passthrough.kept(plain["content"]) and passthrough.kept(plain["structuredContent"])
    watched = asyncio.run(answer(with_middleware=True))
    assert not passthrough.kept(watched["content"])
    assert seen == [json.loads(written_backend.ROWS)]
    assert watched["content"] == json.loads(orjson.dumps(plain["content"]))
