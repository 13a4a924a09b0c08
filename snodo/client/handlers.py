"""What a client can do for a server: its handlers, the capabilities they declare, and
validated answers.

The same object answers a modern server's MRTR input requests and a legacy server's
server-to-client requests, so both eras see the same capabilities, the same handlers
and the same validation: every answer is checked against its result model
(ElicitResult, CreateMessageResult, ListRootsResult) before it leaves the client, an
accepted form against the form's schema, and roots for their ``file://`` URIs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from snodo.asking.form_schema import RejectedValueError, check_content, check_schema
from snodo.client.errors import LimitExceeded
from snodo.client.results import INPUT_RESULTS, InputHandler, ProtocolViolation

SAFE_URL_SCHEMES = frozenset({"http", "https"})
"""What a URL-mode elicitation may send the user to; ``javascript:``, ``file:``,
``data:`` and the rest never reach the handler (client/elicitation.mdx asks clients
not to open URLs that could harm the user)."""

__all__ = ["InputHandlers"]


class InputHandlers:
    def __init__(
        self,
        *,
        elicitation: InputHandler | None = None,
        url_elicitation: InputHandler | None = None,
        sampling: InputHandler | None = None,
        sampling_tools: bool = False,
        sampling_context: bool = False,
        roots: InputHandler | None = None,
    ) -> None:
        self.form_elicitation = elicitation
        self.url_elicitation = url_elicitation
        self.handlers: dict[str, InputHandler] = {}
        if elicitation is not None or url_elicitation is not None:
            self.handlers["elicitation/create"] = self._elicit
        if sampling is not None:
            self.handlers["sampling/createMessage"] = sampling
        if roots is not None:
            self.handlers["roots/list"] = roots
        self.sampling_tools = sampling_tools and sampling is not None
        self.sampling_context = sampling_context and sampling is not None
        self.extensions: dict[str, dict[str, Any]] = {}
        """Extensions the client declares (``Client(extensions=...)``), in both eras."""

    def declares(self, method: str) -> bool:
        return method in self.handlers

    def capabilities(self) -> dict[str, Any]:
        """Only what a handler is installed for: elicitation form/url, sampling (and
        its tools and context parts), roots; and the extensions declared."""
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
        if self.extensions:
            caps["extensions"] = {key: dict(value) for key, value in self.extensions.items()}
        return caps

    async def _elicit(self, params: dict[str, Any]) -> Any:
        handler = self.url_elicitation if params.get("mode") == "url" else self.form_elicitation
        assert handler is not None  # check() refused the undeclared mode
        return await _maybe(handler(params))

    def check(self, request: Any) -> None:
        """Refuse (``ProtocolViolation``) a request this client did not declare it can
        answer: its method, its elicitation mode, sampling's ``tools``/``toolChoice``
        without ``sampling.tools``, ``includeContext`` other than ``none`` without
        ``sampling.context``, or a URL whose scheme is not http(s)."""
        if not isinstance(request, Mapping):
            raise ProtocolViolation("an input request that is not an object")
        method = str(request.get("method"))
        if method not in self.handlers:
            raise ProtocolViolation(
                f"the server asked for {method}, which this client did not declare"
            )
        params = request.get("params", {})
        if not isinstance(params, Mapping):
            raise ProtocolViolation(f"{method} with params that are not an object")
        if method == "sampling/createMessage":
            if ("tools" in params or "toolChoice" in params) and not self.sampling_tools:
                raise ProtocolViolation("sampling with tools, but sampling.tools was not declared")
            context = params.get("includeContext")
            if context not in (None, "none") and not self.sampling_context:
                raise ProtocolViolation(
                    f"sampling with includeContext {context!r}, "
                    "but sampling.context was not declared"
                )
        if method == "elicitation/create":
            url_mode = params.get("mode") == "url"
            if (self.url_elicitation if url_mode else self.form_elicitation) is None:
                raise ProtocolViolation("the server asked for an elicitation mode not declared")
            if url_mode:
                url = params.get("url")
                scheme = urlsplit(url).scheme.lower() if isinstance(url, str) else ""
                if scheme not in SAFE_URL_SCHEMES:
                    raise ProtocolViolation(f"an elicitation URL with scheme {scheme!r}")

    def check_round(self, requests: Any, cap: int) -> None:
        """Check every input request of a round before any handler runs, so the user
        is never asked something when a later request of the round is refused."""
        if not isinstance(requests, Mapping):
            raise ProtocolViolation("inputRequests is not an object")
        if len(requests) > cap:
            raise LimitExceeded(f"more than {cap} input requests in one round")
        for request in requests.values():
            self.check(request)

    async def answer_round(self, requests: Any, cap: int) -> dict[str, Any]:
        """Every input request of a round answered, by key, once ``check_round`` lets
        the whole round through."""
        self.check_round(requests, cap)
        return {key: await self.answer(request) for key, request in requests.items()}

    async def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Run the handler for ``request`` (method and params), once ``check`` lets
        it; return its validated result as wire JSON."""
        self.check(request)
        method = str(request.get("method"))
        handler = self.handlers[method]
        answer = await _maybe(handler(dict(request.get("params") or {})))
        if isinstance(answer, BaseModel):
            answer = answer.model_dump(mode="json", by_alias=True)
        try:
            INPUT_RESULTS[method].model_validate(answer)
        except ValidationError as exc:
            raise ValueError(f"the {method} handler returned an invalid result: {exc}") from exc
        if method == "elicitation/create":
            _check_form_answer(request.get("params") or {}, answer)
        elif method == "roots/list" and not all(
            str(root.get("uri", "")).startswith("file://") for root in answer.get("roots", ())
        ):
            raise ValueError("the roots/list handler returned a root that is not a file:// URI")
        return dict(answer)


def _check_form_answer(params: Mapping[str, Any], answer: Mapping[str, Any]) -> None:
    """An accepted form answer fits the form it answers (client/elicitation.mdx: the
    client SHOULD check it before sending); ValueError, never quoting the values, for
    the handler's mistake. A form outside the specification's subset is not checked."""
    if answer.get("action") != "accept" or params.get("mode", "form") != "form":
        return
    try:
        checked = check_schema(params.get("requestedSchema"))
    except ValueError:
        return
    try:
        check_content(checked, answer.get("content") or {})
    except RejectedValueError as exc:
        raise ValueError(f"the elicitation handler's answer does not fit the form: {exc}") from None


async def _maybe(value: Any) -> Any:
    return await value if isinstance(value, Awaitable) else value
