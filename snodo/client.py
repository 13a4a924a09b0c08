"""A client that answers input requests and retries (MRTR), at the current revision.

Every request carries ``_meta`` with the protocol version, the client's info and its
capabilities; over HTTP also the mirrored headers. Capabilities are declared only for
what a handler is installed for: elicitation form/url, sampling (and its tools and
context parts), roots.

``call_tool``, ``read_resource`` and ``get_prompt`` run the MRTR loop: when the server
answers ``input_required``, each input request goes to its handler, every answer is
validated (ElicitResult, CreateMessageResult, ListRootsResult) before it is sent, and
the same request is sent again with a fresh id, the answers under the same keys, and
the exact ``requestState`` (none when none was given). Rounds are bounded; state-only
rounds back off exponentially; an optional deadline bounds the whole flow. With
``manual=True`` the InputRequiredResult itself is returned, so a distributed client can
persist it and ``resume`` elsewhere.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from snodo.errors import ErrorCode
from snodo.http_headers import request_headers, valid_header_params
from snodo.transports.client import ClientTransport, HttpTransport
from snodo_wire import (
    CallToolResult,
    CreateMessageResult,
    ElicitResult,
    GetPromptResult,
    InputRequiredResult,
    ListRootsResult,
    ReadResourceResult,
)
from snodo_wire.protocol import (
    LATEST_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
)

__all__ = ["Client", "Flow", "ProtocolViolation", "RequestError", "TooManyRounds"]

Handler = Callable[[dict[str, Any]], Awaitable[Any] | Any]
"""Gets the input request's params; returns the result (a dict or the generated model)."""


class RequestError(Exception):
    """The server answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data

    @property
    def required_capabilities(self) -> dict[str, Any] | None:
        """For -32021: the client capabilities the server needed."""
        if self.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY and isinstance(
            self.data, dict
        ):
            required = self.data.get("requiredCapabilities")
            return required if isinstance(required, dict) else None
        return None


class TooManyRounds(Exception):
    """The server kept asking for input past ``max_rounds``, or past the deadline."""


class ProtocolViolation(Exception):
    """The server answered in a way the protocol does not allow."""


@dataclass(frozen=True, slots=True)
class Flow:
    """A paused MRTR flow (manual mode): everything needed to resume it anywhere."""

    method: str
    params: dict[str, Any]
    result: InputRequiredResult


RESULT_MODELS: dict[str, type[BaseModel]] = {
    "tools/call": CallToolResult,
    "resources/read": ReadResourceResult,
    "prompts/get": GetPromptResult,
}

INPUT_RESULTS: dict[str, type[BaseModel]] = {
    "elicitation/create": ElicitResult,
    "sampling/createMessage": CreateMessageResult,
    "roots/list": ListRootsResult,
}


class Client:
    """An MCP client that runs every round of a multi round-trip request for the caller.

    It speaks through a ``ClientTransport`` (``Client.http(url)``, ``StdioTransport``,
    ``MemoryTransport``) and sends the per-request ``_meta`` on every request. A handler
    given for elicitation (form, URL), sampling or roots both answers those input
    requests and declares the matching capability; nothing else is declared. Each
    answer is validated before it is sent, and the retry carries the answers and the
    exact ``requestState``. ``max_rounds``, ``backoff`` and ``deadline`` bound a flow.
    Use it as an async context manager so the transport closes.
    """

    def __init__(
        self,
        transport: ClientTransport,
        *,
        name: str = "snodo-client",
        version: str = "0.1.0",
        protocol_version: str = LATEST_PROTOCOL_VERSION,
        elicitation: Handler | None = None,
        url_elicitation: Handler | None = None,
        sampling: Handler | None = None,
        sampling_tools: bool = False,
        sampling_context: bool = False,
        roots: Handler | None = None,
        max_rounds: int = 10,
        backoff: tuple[float, float] = (0.05, 2.0),
        deadline: float | None = None,
        on_notification: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.transport = transport
        self.info = {"name": name, "version": version}
        self.protocol_version = protocol_version
        self.handlers: dict[str, Handler] = {}
        self.url_elicitation = url_elicitation
        if elicitation is not None or url_elicitation is not None:
            self.handlers["elicitation/create"] = self._elicit
        self.form_elicitation = elicitation
        if sampling is not None:
            self.handlers["sampling/createMessage"] = sampling
        if roots is not None:
            self.handlers["roots/list"] = roots
        self.sampling_tools = sampling_tools and sampling is not None
        self.sampling_context = sampling_context and sampling is not None
        self.max_rounds = max_rounds
        self.backoff = backoff
        self.deadline = deadline
        self.on_notification = on_notification or (lambda _: None)
        self.ids = itertools.count(1)
        self.tool_schemas: dict[str, Mapping[str, Any]] = {}

    @classmethod
    def http(cls, url: str, **options: Any) -> Client:
        return cls(HttpTransport(url), **options)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.transport.close()

    # -- the wire ------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        elicitation: dict[str, Any] = {}
        if self.form_elicitation is not None:
            elicitation["form"] = {}
        if self.url_elicitation is not None:
            elicitation["url"] = {}
        if elicitation:
            caps["elicitation"] = elicitation
        if "sampling/createMessage" in self.handlers:
            sampling: dict[str, Any] = {}
            if self.sampling_tools:
                sampling["tools"] = {}
            if self.sampling_context:
                sampling["context"] = {}
            caps["sampling"] = sampling
        if "roots/list" in self.handlers:
            caps["roots"] = {}
        return caps

    def _meta(self) -> dict[str, Any]:
        return {
            META_PROTOCOL_VERSION: self.protocol_version,
            META_CLIENT_CAPABILITIES: self.capabilities(),
            META_CLIENT_INFO: self.info,
        }

    def _message(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        meta = {**self._meta(), **dict(params.get("_meta") or {})}
        return {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": method,
            "params": {**params, "_meta": meta},
        }

    def _headers(self, method: str, params: Mapping[str, Any]) -> dict[str, str]:
        schema = self.tool_schemas.get(params.get("name", "")) if method == "tools/call" else None
        return request_headers(method, params, self.protocol_version, schema)

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its raw result; retry once on -32022."""
        params = dict(params or {})
        for attempt in range(2):
            message = self._message(method, params)
            response = await self.transport.request(
                message, self._headers(method, params), self.on_notification
            )
            error = response.get("error")
            if error is None:
                result = response.get("result")
                if not isinstance(result, dict):
                    raise ProtocolViolation("a response without a result object")
                return result
            code, data = error.get("code"), error.get("data")
            supported = data.get("supported") if isinstance(data, dict) else None
            if code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and attempt == 0 and supported:
                # basic/versioning.mdx: pick a version both sides speak and retry.
                usable = [v for v in SUPPORTED_PROTOCOL_VERSIONS if v in supported]
                if usable:
                    self.protocol_version = usable[0]
                    continue
            raise RequestError(int(code), str(error.get("message", "")), data)
        raise AssertionError("unreachable")

    # -- MRTR ----------------------------------------------------------------------------

    async def _elicit(self, params: dict[str, Any]) -> Any:
        handler = self.url_elicitation if params.get("mode") == "url" else self.form_elicitation
        if handler is None:
            raise ProtocolViolation("the server asked for an elicitation mode not declared")
        return await _maybe(handler(params))

    async def _answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        method = str(request.get("method"))
        handler = self.handlers.get(method)
        if handler is None:
            raise ProtocolViolation(
                f"the server asked for {method}, which this client did not declare"
            )
        answer = await _maybe(handler(dict(request.get("params") or {})))
        if isinstance(answer, BaseModel):
            answer = answer.model_dump(mode="json", by_alias=True)
        try:
            INPUT_RESULTS[method].model_validate(answer)
        except ValidationError as exc:
            raise ValueError(f"the {method} handler returned an invalid result: {exc}") from exc
        return dict(answer)

    async def run(self, method: str, params: Mapping[str, Any], manual: bool = False) -> Any:
        """Send the request, answering input requests and retrying until complete."""
        params = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        return await self._rounds(method, params, None, None, manual)

    async def resume(
        self, flow: Flow, responses: Mapping[str, Any] | None = None, manual: bool = False
    ) -> Any:
        """Continue a paused flow, here or in another process: answer its input requests
        (or send ``responses`` as the answers) and go on with the same bounds as ``run``."""
        raw = flow.result.model_dump(mode="json", by_alias=True)
        requests: dict[str, Any] = raw.get("inputRequests") or {}
        if responses is not None:
            answers: dict[str, Any] | None = dict(responses)
        else:
            answers = {key: await self._answer(request) for key, request in requests.items()}
        state = raw.get("requestState")
        return await self._rounds(
            flow.method,
            flow.params,
            answers if (answers or responses is not None) else None,
            state if isinstance(state, str) else None,
            manual,
        )

    async def _rounds(
        self,
        method: str,
        params: dict[str, Any],
        responses: dict[str, Any] | None,
        state: str | None,
        manual: bool,
    ) -> Any:
        started = time.monotonic()
        delay = self.backoff[0]
        for _ in range(self.max_rounds):
            sent = dict(params)
            if responses is not None:
                sent["inputResponses"] = responses
            if state is not None:
                sent["requestState"] = state
            result = await self.request(method, sent)
            kind = result.get("resultType", "complete")  # absent: an older server's result
            if kind == "complete":
                return RESULT_MODELS[method].model_validate({**result, "resultType": kind})
            if kind != "input_required":
                raise ProtocolViolation(f"unknown resultType {kind!r}")
            interim = InputRequiredResult.model_validate(result)
            if manual:
                return Flow(method, params, interim)
            requests = result.get("inputRequests") or {}
            state = result.get("requestState")
            if not requests and state is None:
                raise ProtocolViolation("input_required without inputRequests or requestState")
            if not requests:
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.backoff[1])
            else:
                delay = self.backoff[0]
            responses = {key: await self._answer(req) for key, req in requests.items()} or None
            if self.deadline is not None and time.monotonic() - started > self.deadline:
                raise TooManyRounds(f"{method} did not complete within {self.deadline} s")
        raise TooManyRounds(f"{method} still needed input after {self.max_rounds} rounds")

    # -- the methods -----------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        manual: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> Any:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if meta:
            params["_meta"] = dict(meta)
        return await self.run("tools/call", params, manual)

    async def read_resource(self, uri: str, *, manual: bool = False) -> Any:
        return await self.run("resources/read", {"uri": uri}, manual)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, manual: bool = False
    ) -> Any:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.run("prompts/get", params, manual)

    async def discover(self) -> dict[str, Any]:
        return await self.request("server/discover")

    async def _all(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(10_000):
            result = await self.request(method, {} if cursor is None else {"cursor": cursor})
            items += result.get(key, [])
            cursor = result.get("nextCursor")
            if cursor is None:
                return items
        raise ProtocolViolation(f"{method} kept returning cursors")

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, following cursors. Tools whose x-mcp-header use is invalid are
        dropped (basic/transports/streamable-http.mdx), and the rest remembered so that
        calls carry their Mcp-Param headers."""
        tools = [
            t
            for t in await self._all("tools/list", "tools")
            if valid_header_params(t.get("inputSchema") or {})
        ]
        self.tool_schemas = {t["name"]: t.get("inputSchema") or {} for t in tools}
        return tools

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._all("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._all("resources/templates/list", "resourceTemplates")

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._all("prompts/list", "prompts")

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        result = await self.request("completion/complete", params)
        completion: dict[str, Any] = result["completion"]
        return completion

    async def listen(self, **notifications: Any) -> AsyncIterator[dict[str, Any]]:
        """subscriptions/listen: yield notifications until the caller stops iterating."""
        params = {"notifications": notifications}
        message = self._message("subscriptions/listen", params)
        stream = self.transport.stream(message, self._headers("subscriptions/listen", params))
        try:
            async for item in stream:
                if "error" in item:
                    error = item["error"]
                    raise RequestError(
                        int(error.get("code")), str(error.get("message")), error.get("data")
                    )
                if "method" not in item:
                    return
                yield item
        finally:
            # Closing the iterator ends the stream now, and with it the subscription.
            await stream.aclose()


async def _maybe(value: Any) -> Any:
    return await value if isinstance(value, Awaitable) else value
