"""What a client can do for a server: its handlers, the capabilities they declare, and
validated answers.

The same object answers a modern server's MRTR input requests and a legacy server's
server-to-client requests, so both eras see the same capabilities, the same handlers
and the same validation: every answer is checked against its result model
(ElicitResult, CreateMessageResult, ListRootsResult) before it leaves the client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from snodo.client_results import INPUT_RESULTS, Handler, ProtocolViolation

__all__ = ["InputHandlers"]


class InputHandlers:
    def __init__(
        self,
        *,
        elicitation: Handler | None = None,
        url_elicitation: Handler | None = None,
        sampling: Handler | None = None,
        sampling_tools: bool = False,
        sampling_context: bool = False,
        roots: Handler | None = None,
    ) -> None:
        self.form_elicitation = elicitation
        self.url_elicitation = url_elicitation
        self.handlers: dict[str, Handler] = {}
        if elicitation is not None or url_elicitation is not None:
            self.handlers["elicitation/create"] = self._elicit
        if sampling is not None:
            self.handlers["sampling/createMessage"] = sampling
        if roots is not None:
            self.handlers["roots/list"] = roots
        self.sampling_tools = sampling_tools and sampling is not None
        self.sampling_context = sampling_context and sampling is not None

    def declares(self, method: str) -> bool:
        return method in self.handlers

    def capabilities(self) -> dict[str, Any]:
        """Only what a handler is installed for: elicitation form/url, sampling (and
        its tools and context parts), roots."""
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

    async def _elicit(self, params: dict[str, Any]) -> Any:
        handler = self.url_elicitation if params.get("mode") == "url" else self.form_elicitation
        if handler is None:
            raise ProtocolViolation("the server asked for an elicitation mode not declared")
        return await _maybe(handler(params))

    async def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Run the handler for ``request`` (method and params); return its validated
        result as wire JSON."""
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


async def _maybe(value: Any) -> Any:
    return await value if isinstance(value, Awaitable) else value
