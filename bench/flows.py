"""What ``http_flow.py`` and ``inprocess.py`` serve and send: three ASGI apps, two flows.

Not a benchmark itself; the two scripts import it (run from the repository root,
``bench/`` is first on ``sys.path``).

The flows, each a 2026-07-28 ``tools/call`` with the ``_meta`` envelope and the mirrored
headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``):

* **mrtr**, the two-round elicitation: ``theme {"user": "alice"}`` is answered
  ``input_required`` with one form elicitation (light, dark or system) and a signed
  ``requestState`` carrying ``{"user": "alice", "step": 1}``; the retry carries
  ``inputResponses.theme`` (accept, dark) and the state, and is answered ``complete``
  with ``alice: theme dark (step 2)``;
* **echo**, one round: ``echo {"text": "hello, world"}`` is answered ``complete`` with
  that text.

The apps, each serving both tools:

* **snodo**: ``HttpApp`` over a ``Server``; the theme tool uses ``snodo.asking.elicitation`` (the
  answer checked against the requested schema) and a ``snodo.core.state.keyring.Keyring`` built once
  (HMAC-SHA256 state bound to method, principal and arguments);
* **official**: ``mcp`` 2.3.0 ``MCPServer`` served by ``streamable_http_app(json_response=
  True, stateless_http=True)``; the theme tool returns ``InputRequiredResult`` and reads
  ``ctx.input_responses``/``ctx.request_state`` on the retry, the state sealed by the
  SDK's ``RequestStateBoundary`` (AES-256-GCM, bound to method, tool, arguments and
  audience);
* **floor**: a bare ASGI app doing what any correct server of this transport must at
  least do: the Host and Origin checks against DNS rebinding, method POST, Content-Type
  and Accept, ``json.loads``, ``MCP-Protocol-Version`` against the body's ``_meta``
  version, ``Mcp-Method`` and ``Mcp-Name`` against the body, an HMAC-SHA256 seal (round
  one) or verify (round two) of the small state, ``json.dumps``. No envelope, params,
  arguments or answer validation and no state binding: everything snodo does beyond
  this is what the ratio prices.
"""

import base64
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

KINDS = ("floor", "snodo", "official")
OBSERVED = "snodo-otel"
LIMITED = "snodo-ratelimit"
"""snodo behind ``RateLimit`` in memory, its budget too large to refuse anything."""
"""snodo with an OtelObserver (opt-in: ``http_flow.py --servers floor,snodo,snodo-otel``)."""
FLOWS = ("mrtr", "echo")
REQUESTS_PER_FLOW = {"mrtr": 2, "echo": 1}
SECRET = bytes(range(32))  # a fixed benchmark key, shared by nobody
PROTOCOL = "2026-07-28"
PATH = "/mcp"
USER = "alice"
ECHOED = "hello, world"
THEMES = ["light", "dark", "system"]
QUESTION = "Which theme do you prefer?"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"theme": {"type": "string", "title": "Theme", "enum": THEMES}},
    "required": ["theme"],
}
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
META: dict[str, Any] = {
    VERSION_KEY: PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
ELICITATION: dict[str, Any] = {
    "method": "elicitation/create",
    "params": {"mode": "form", "message": QUESTION, "requestedSchema": SCHEMA},
}
TOOL = {"mrtr": "theme", "echo": "echo"}


def final_text(user: str, theme: str, step: int) -> str:
    return f"{user}: theme {theme} (step {step + 1})"


# -- the three apps -----------------------------------------------------------------------


def snodo_build() -> str:
    """Which snodo the figures are of: the compiled build (setup.py, as
    ``scripts/compiled`` runs it) or the pure-Python sources."""
    import snodo.core.jsonrpc  # noqa: PLC0415 - imported where snodo is measured

    return "pure Python" if snodo.core.jsonrpc.__file__.endswith(".py") else "compiled (setup.py)"


def theme_asker() -> Callable[[Any, str, Any], Any]:
    """The snodo theme tool's body (``features.py`` serves it from an ``async def``):
    ask in round one, answer from the state and the form in round two. Made once per
    app, so the snodo modules are imported once, not on every call."""
    from snodo.asking import elicitation  # noqa: PLC0415 - only the snodo process needs it
    from snodo.core.result import input_required  # noqa: PLC0415

    def ask_theme(ctx: Any, user: str, question: Any) -> Any:
        answer = elicitation.response(ctx, "theme", question)
        if isinstance(answer, elicitation.Declined | elicitation.Cancelled):
            return "Nothing changed."
        if not isinstance(answer, elicitation.Accepted):
            # Sealed by the server, once, with the question pinned beside it.
            return input_required({"theme": question}, state={"user": user, "step": 1})
        known = ctx.state_data
        return final_text(known["user"], str(answer.content["theme"]), known["step"])

    return ask_theme


def snodo_app(observed: bool = False, limited: bool = False) -> AsgiApp:
    from snodo.asking import elicitation  # noqa: PLC0415 - only the snodo process needs it
    from snodo.core.context import Context  # noqa: PLC0415
    from snodo.core.result import InputRequired  # noqa: PLC0415
    from snodo.core.state.keyring import Keyring  # noqa: PLC0415
    from snodo.server import Server, State  # noqa: PLC0415
    from snodo.transports.http import HttpApp  # noqa: PLC0415

    # The server's own keys: it verifies the echoed state before the handler runs, and
    # pins the question asked beside what the handler sealed.
    server = Server("bench-flow", "1.0.0", state=State(keyring=Keyring(secret=SECRET)))
    if observed:  # the otel extra with SDK providers and no exporter: spans made, dropped
        from opentelemetry.sdk.metrics import MeterProvider  # noqa: PLC0415
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415

        from snodo.otel import OtelObserver  # noqa: PLC0415

        server.observer = OtelObserver(
            tracer_provider=TracerProvider(), meter_provider=MeterProvider()
        )
    if limited:
        from snodo.middleware import RateLimit  # noqa: PLC0415

        server.middleware(RateLimit(10**9, burst=10**9))
    question = elicitation.form(QUESTION, SCHEMA)
    ask_theme = theme_asker()

    # inline=True: the floor and the official app answer on the event loop too, so the
    # thread a plain ``def`` gets by default is measured on its own (bench/threads.py).
    @server.tool(inline=True)
    def theme(user: str, ctx: Context) -> InputRequired | str:
        """Ask the user which theme they prefer."""
        asked: InputRequired | str = ask_theme(ctx, user, question)
        return asked

    @server.tool(inline=True)
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    return HttpApp(server, path=PATH)


def official_app() -> AsgiApp:
    import mcp_types as types  # noqa: PLC0415 - the SDK is the optional bench extra
    from mcp.server.mcpserver import Context, MCPServer  # noqa: PLC0415
    from mcp.server.request_state import RequestStateSecurity  # noqa: PLC0415

    server = MCPServer(
        "bench-flow",
        version="1.0.0",
        request_state_security=RequestStateSecurity(keys=[SECRET]),
    )
    question = types.ElicitRequest(
        method="elicitation/create",
        params=types.ElicitRequestFormParams(
            mode="form", message=QUESTION, requested_schema=SCHEMA
        ),
    )

    @server.tool()
    def theme(user: str, ctx: Context) -> str | types.InputRequiredResult:
        """Ask the user which theme they prefer."""
        answer = (ctx.input_responses or {}).get("theme")
        chosen = None
        if isinstance(answer, types.ElicitResult):
            if answer.action != "accept":
                return "Nothing changed."
            chosen = (answer.content or {}).get("theme")
        if ctx.request_state is None or chosen not in THEMES:
            return types.InputRequiredResult(
                input_requests={"theme": question},
                request_state=json.dumps({"user": user, "step": 1}),
            )
        known = json.loads(ctx.request_state)
        return final_text(known["user"], str(chosen), known["step"])

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    app: AsgiApp = server.streamable_http_app(
        streamable_http_path=PATH, json_response=True, stateless_http=True
    )
    return app


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _floor_result(params: dict[str, Any]) -> dict[str, Any] | None:
    if params["name"] == "echo":
        text = params["arguments"]["text"]
        return {"resultType": "complete", "content": [{"type": "text", "text": text}]}
    token = params.get("requestState")
    if token is None:
        payload = _b64(json.dumps({"user": params["arguments"]["user"], "step": 1}).encode())
        mac = _b64(hmac.digest(SECRET, payload.encode("ascii"), hashlib.sha256))
        return {
            "resultType": "input_required",
            "inputRequests": {"theme": ELICITATION},
            "requestState": f"{payload}.{mac}",
        }
    payload, _, mac = str(token).rpartition(".")
    expected = _b64(hmac.digest(SECRET, payload.encode("ascii"), hashlib.sha256))
    if not hmac.compare_digest(expected, mac):
        return None
    known = json.loads(_unb64(payload))
    chosen = params["inputResponses"]["theme"]["content"]["theme"]
    text = final_text(known["user"], chosen, known["step"])
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


FLOOR_HOSTS = frozenset({b"127.0.0.1", b"localhost", b"[::1]"})
FLOOR_ORIGINS = frozenset({b"http://127.0.0.1", b"http://localhost", b"http://[::1]"})


def _floor_refusal(scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, bytes] | None:
    """The checks that need only the head: Host and Origin, method, types."""
    host = headers.get(b"host", b"")
    if host.rpartition(b":")[0] not in FLOOR_HOSTS and host not in FLOOR_HOSTS:
        return 421, b"misdirected request"
    origin = headers.get(b"origin")
    if (
        origin is not None
        and origin not in FLOOR_ORIGINS
        and origin.rpartition(b":")[0] not in FLOOR_ORIGINS
    ):
        return 403, b"forbidden origin"
    if scope["method"] != "POST":
        return 405, b"method not allowed"
    if headers.get(b"content-type", b"").split(b";")[0].strip().lower() != b"application/json":
        return 415, b"unsupported media type"
    accept = headers.get(b"accept", b"*/*")
    if b"application/json" not in accept and b"text/event-stream" not in accept:
        return 406, b"not acceptable"
    return None


async def floor_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    headers = dict(scope["headers"])
    refusal = _floor_refusal(scope, headers)
    status = 200
    if refusal is not None:
        status, out = refusal
    else:
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        request = json.loads(body)
        params = request["params"]
        if (
            headers.get(b"mcp-protocol-version", b"").decode() != params["_meta"][VERSION_KEY]
            or headers.get(b"mcp-method", b"").decode() != request["method"]
            or headers.get(b"mcp-name", b"").decode() != params["name"]
        ):
            status, result = 400, None
        else:
            result = _floor_result(params)
        if result is None:
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": request["id"],
                "error": {"code": -32602, "message": "Invalid request"},
            }
        else:
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        out = json.dumps(reply, separators=(",", ":")).encode()
    kind = b"application/json" if status == 200 or refusal is None else b"text/plain"
    start = [(b"content-type", kind), (b"content-length", b"%d" % len(out))]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": out})


APPS: dict[str, Callable[[], AsgiApp]] = {
    "floor": lambda: floor_app,
    "snodo": snodo_app,
    "official": official_app,
    OBSERVED: lambda: snodo_app(observed=True),
    LIMITED: lambda: snodo_app(limited=True),
}


# -- requests -----------------------------------------------------------------------------


def call_body(
    request_id: int,
    flow: str,
    user: str = USER,
    theme: str | None = None,
    state: str | None = None,
) -> dict[str, Any]:
    arguments = {"text": ECHOED} if flow == "echo" else {"user": user}
    params: dict[str, Any] = {"_meta": META, "name": TOOL[flow], "arguments": arguments}
    if theme is not None:
        params["inputResponses"] = {"theme": {"action": "accept", "content": {"theme": theme}}}
    if state is not None:
        params["requestState"] = state
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def headers_for(flow: str) -> dict[str, str]:
    """What a 2026-07-28 client sends with a call of this flow's tool."""
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": "tools/call",
        "Mcp-Name": TOOL[flow],
    }


def expected_text(flow: str) -> str:
    return ECHOED if flow == "echo" else final_text(USER, "dark", 1)


STATE_MARK = b'"requestState":"'


def state_of(body: bytes) -> bytes:
    """The requestState in a round-one answer, as the raw JSON string's bytes."""
    at = body.find(STATE_MARK)
    if at < 0:
        return b""
    at += len(STATE_MARK)
    return body[at : body.find(b'"', at)]
