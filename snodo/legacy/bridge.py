"""The bridge: one MRTR handler serving a legacy client, unchanged.

Theory of operation. A legacy request the modern core knows (``tools/call``,
``resources/read``, ...) is rewritten as the modern request it means: the session's
negotiated facts go into the per-request ``_meta`` a modern client would have sent
(client capabilities and info from ``initialize``, the log level from
``logging/setLevel``), and it goes through ``Server.handle`` like any modern request,
so every check, middleware, sealed-state rule and admission applies as it does there.

When the core answers input-required, the bridge does what a modern client would:
it sends each input request to the client, here as a real server-to-client request in
the legacy session (``elicitation/create`` with an ``elicitationId`` minted for URL
mode, as the legacy revision requires; ``sampling/createMessage``; ``roots/list``), collects the
answers, and sends the same request again with ``inputResponses`` and the exact
``requestState`` it was given. The core then checks the answers and opens the state
exactly as on a modern retry. Rounds are bounded (``max_rounds``), so is the wait for
each round's answers (``round_timeout``); cancelling the legacy request cancels the
flow and tells the client which of its requests no longer matter.

Capabilities were declared once, at ``initialize``, and admission checks them on each
round as it would on a modern request; a missing one ends a tool call with ``isError``
(a model can read it) and a resource read or prompt with the JSON-RPC error.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Mapping
from typing import Any

from snodo.core import jsonrpc
from snodo.core.context import Emit
from snodo.core.errors import ErrorCode, InternalError, MissingClientCapability, ResourceNotFound
from snodo.core.result import URL_REQUIRED_META
from snodo.legacy.session import ClientAnswerError, LegacySession
from snodo.legacy.wire import LEGACY, check_params, check_request, check_result, legacy_result
from snodo.revisions import AUTHORING, REVISIONS, Revision
from snodo.revisions.authoring.protocol import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from snodo.server import Server
from snodo.server.callers import LEGACY_SESSION
from snodo.server.revised import LISTS, shaped_items

__all__ = ["bridged", "forward"]

RETRY_FIELDS = ("inputResponses", "requestState")


def _no_session(version: str) -> str:
    """What a handler's question is answered with when the session is made for one POST."""
    return (
        "This server keeps no legacy sessions (stateless mode), so it cannot ask the client "
        f"anything mid-call; this needs a client of revision {version}, or a server that "
        "keeps sessions"
    )


STATE_ONLY_BACKOFF = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8)
"""Seconds before retrying a state-only round (no input requests), by round."""


def bridged(server: Server) -> Revision:
    """The modern revision a legacy request is answered through: the authoring one
    where the server offers it, else the newest it offers. Its ``_meta`` keys carry the
    session's facts; its answers are reshaped for the legacy wire (``legacy_result``)."""
    revisions = server.offering.revisions
    if AUTHORING in revisions:
        return revisions[AUTHORING]
    return revisions[server.supported_versions[0]]


def _modern_params(
    session: LegacySession, params: Mapping[str, Any], revision: Revision
) -> dict[str, Any]:
    """The legacy params with the session's facts in a modern ``_meta`` of ``revision``
    (a fact it has no key for is not carried).

    Retry fields a legacy client sent are dropped: in this era only the bridge answers
    input requests.
    """
    out = {key: value for key, value in params.items() if key not in RETRY_FIELDS}
    meta = params.get("_meta")
    facts: dict[str, Any] = {
        META_PROTOCOL_VERSION: revision.version,
        META_CLIENT_CAPABILITIES: dict(session.client_capabilities),
    }
    if session.client_info is not None and revision.client_info_key is not None:
        facts[revision.client_info_key] = dict(session.client_info)
    if session.log_level is not None and revision.log_level_key is not None:
        facts[revision.log_level_key] = session.log_level
    out["_meta"] = {**meta, **facts} if isinstance(meta, dict) else facts
    return out


def _shaped(result: dict[str, Any], method: str, session: LegacySession) -> dict[str, Any]:
    """A list's items with the fields the session's revision defines for them."""
    for kind, (listing, key) in LISTS.items():
        if listing == method and isinstance(result.get(key), list) and session.version:
            revision = REVISIONS.of(session.version)
            return {**result, key: shaped_items(result[key], kind, revision)}
    return result


def _not_found(error: Mapping[str, Any]) -> bool:
    """Whether the core's error is its resource-not-found (-32602 naming the URI)."""
    data = error.get("data")
    return (
        error.get("code") == ErrorCode.INVALID_PARAMS
        and error.get("message") == ResourceNotFound.default_message
        and isinstance(data, dict)
        and "uri" in data
    )


def _refusal(method: str, request_id: Any, message: str, data: Any = None) -> dict[str, Any]:
    """A flow that cannot go on: isError for a tool, a JSON-RPC error otherwise."""
    if method == "tools/call":
        text = message if data is None else f"{message}: {json.dumps(data, sort_keys=True)}"
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        return jsonrpc.result_response(request_id, result)
    error = MissingClientCapability(data, message) if data is not None else InternalError(message)
    return jsonrpc.error_response(request_id, error)


def _elicitation_complete(elicitation_id: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": elicitation_id},
    }


def _url_required(request_id: Any, result: Mapping[str, Any]) -> dict[str, Any] | None:
    """The legacy answer to ``url_required``: its URLElicitationRequiredError (-32042),
    each elicitation with an id of its own (the legacy client/elicitation.mdx); None
    for any other input-required result."""
    meta = result.get("_meta")
    if not (isinstance(meta, dict) and meta.get(URL_REQUIRED_META) is True):
        return None
    requests = (result.get("inputRequests") or {}).values()
    elicitations = [_outgoing(request)[1] for request in requests]
    error = {
        "code": LEGACY.errors.ErrorCode.URL_ELICITATION_REQUIRED,
        "message": "This request needs the user to visit a URL first",
        "data": {"elicitations": elicitations},
    }
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _outgoing(request: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    method = str(request["method"])
    params = dict(request.get("params") or {})
    if method == "elicitation/create" and params.get("mode") == "url":
        # The legacy client/elicitation.mdx: URL mode carries an id unique to the server.
        params.setdefault("elicitationId", secrets.token_urlsafe(16))
    check_request(method, params)
    return method, params


async def _ask(
    session: LegacySession,
    requests: Mapping[str, Mapping[str, Any]],
    send: Emit,
    consented: list[str],
) -> dict[str, Any]:
    """Send one round's input requests at once; every answer, or the first failure. The
    ``elicitationId`` of each URL elicitation the user accepted goes on ``consented``."""
    answers: dict[str, Any] = {}
    timeout = session.limits.round_timeout

    async def one(key: str, request: Mapping[str, Any]) -> None:
        method, params = _outgoing(request)
        answers[key] = answer = await session.request(method, params, send, timeout)
        accepted = isinstance(answer, dict) and answer.get("action") == "accept"
        if "elicitationId" in params and accepted:
            consented.append(params["elicitationId"])

    try:
        async with asyncio.TaskGroup() as group:
            for key, request in requests.items():
                group.create_task(one(key, request))
    except BaseExceptionGroup as group_error:
        failure = group_error.subgroup(ClientAnswerError)
        if failure is not None:
            raise failure.exceptions[0] from None
        raise
    return answers


async def forward(
    server: Server,
    session: LegacySession,
    request: jsonrpc.Request,
    *,
    principal: str | None,
    transport: str,
    emit: Emit,
    scopes: frozenset[str] | None = None,
) -> dict[str, Any]:
    """Answer one forwarded legacy request: a legacy-shaped JSON-RPC response."""
    check_params(request.method, request.params)
    # Whose the request is, for what the server keeps per caller (snodo.server.callers).
    named = LEGACY_SESSION.set(session.id)
    try:
        return await _rounds(server, session, request, principal, transport, emit, scopes)
    finally:
        LEGACY_SESSION.reset(named)


async def _rounds(
    server: Server,
    session: LegacySession,
    request: jsonrpc.Request,
    principal: str | None,
    transport: str,
    emit: Emit,
    scopes: frozenset[str] | None,
) -> dict[str, Any]:
    revision = bridged(server)
    params = _modern_params(session, request.params, revision)
    retry: dict[str, Any] = {}
    consented: list[str] = []
    for round_number in range(session.limits.max_rounds + 1):
        message = {
            "jsonrpc": "2.0",
            "id": request.id,
            "method": request.method,
            "params": {**params, **retry},
        }
        reply = await server.handle(
            message, principal=principal, transport=transport, emit=emit, scopes=scopes
        )
        # A proxy's members kept as their bytes are read: the result is reshaped, checked.
        response: dict[str, Any] | None = jsonrpc.decode_passthrough(reply.response)
        if response is None:  # the core never leaves a request unanswered
            raise InternalError()
        for note in reply.notifications:
            emit(note)
        error = response.get("error")
        if isinstance(error, dict):
            if error.get("code") == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY:
                return _refusal(
                    request.method,
                    request.id,
                    _no_session(revision.version)
                    if session.stateless
                    else "The client did not declare, at initialize, a capability this needs",
                    (error.get("data") or {}).get("requiredCapabilities"),
                )
            if request.method == "resources/read" and _not_found(error):
                # The legacy revision names its own code for it (server/resources.mdx).
                return {
                    **response,
                    "error": {**error, "code": LEGACY.errors.ErrorCode.RESOURCE_NOT_FOUND},
                }
            return response
        result = response["result"]
        if result.get("resultType") != "input_required":
            for elicitation_id in consented:
                # The flow went on past the page the user agreed to open: that interaction
                # is over (the legacy client/elicitation.mdx, URL mode completion).
                emit(_elicitation_complete(elicitation_id))
            if request.method not in LEGACY.methods:
                # An extension's method: its result is what the extension defines, in
                # either era (its schema is built on the modern Result).
                return jsonrpc.result_response(request.id, result)
            answered = legacy_result(result)
            if server.registry.revised:  # fields given to items: only those it defines
                answered = _shaped(answered, request.method, session)
            return jsonrpc.result_response(request.id, check_result(request.method, answered))
        url_required = _url_required(request.id, result)
        if url_required is not None:
            return url_required
        if round_number == session.limits.max_rounds:
            break
        requests = result.get("inputRequests") or {}
        if requests:
            try:
                answers = await _ask(session, requests, emit, consented)
            except ClientAnswerError as exc:
                return _refusal(request.method, request.id, f"Input was not given: {exc}")
        else:
            answers = {}
            delay = STATE_ONLY_BACKOFF[min(round_number, len(STATE_ONLY_BACKOFF) - 1)]
            await asyncio.sleep(delay)
        retry = {"inputResponses": answers} if answers else {}
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
    return _refusal(request.method, request.id, "Input was asked for too many rounds")
