"""Results a handler returns that are more than plain content.

``input_required(...)`` ends the request with an InputRequiredResult (MRTR): the
client gathers the answers and retries. Nothing waits on the server in between.
``tool_error(...)`` is a tool result with ``isError: true``: the tool ran and failed
in a way the model should see, as opposed to a protocol error. ``url_required(...)``
says the request cannot go on until the user has finished something out of band (a
sign-in, a payment) at the URLs given; the client sends the request again afterwards,
and the handler looks again (client/elicitation.mdx of both revisions).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import MISSING  # the wire models' own sentinel for a field left out

from snodo.core.input_requests import Watch

__all__ = [
    "MISSING",
    "NO_STATE",
    "URL_REQUIRED_META",
    "InputRequired",
    "ToolError",
    "input_required",
    "mark_taken",
    "tool_error",
    "url_required",
]

URL_REQUIRED_META = "snodo/urlRequired"
"""The ``_meta`` key that marks an InputRequiredResult made by ``url_required``: a
legacy session answers it with the URL-elicitation-required error of its revision."""

NO_STATE: Any = object()
"""``InputRequired.state`` when the handler left the server nothing to seal."""


@dataclass(frozen=True, slots=True)
class InputRequired:
    """An InputRequiredResult in the making; admission checks it before it leaves."""

    input_requests: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    request_state: str | None = None
    url_required: bool = False
    """Made by ``url_required``: only URL elicitations, the request to be sent afresh."""
    state: Any = NO_STATE
    """Data the server seals as the ``requestState`` (``input_required(state=...)``),
    with the round's questions beside it; ``NO_STATE`` for none."""
    watch: Watch | None = field(default=None, compare=False, repr=False)
    """Made by ``input_required``: warns if this is dropped untaken
    (``snodo.core.input_requests``)."""

    def __init__(
        self,
        input_requests: Mapping[str, Mapping[str, Any]] | None = None,
        request_state: str | None = None,
        url_required: bool = False,
        state: Any = NO_STATE,
    ) -> None:
        # Written out, not generated: compiled (setup.py) it is native code, where the
        # dataclass's own __init__ runs as Python on every round that asks.
        setattr_ = object.__setattr__
        setattr_(self, "input_requests", {} if input_requests is None else input_requests)
        setattr_(self, "request_state", request_state)
        setattr_(self, "url_required", url_required)
        setattr_(self, "state", state)
        setattr_(self, "watch", None)

    def to_result(self) -> dict[str, Any]:
        """The InputRequiredResult as it goes on the wire, before admission checks it."""
        result: dict[str, Any] = {"resultType": "input_required"}
        if self.url_required:
            result["_meta"] = {URL_REQUIRED_META: True}
        if self.input_requests:
            result["inputRequests"] = dict(self.input_requests)
        if self.request_state is not None:
            result["requestState"] = self.request_state
        return result


def input_required(
    input_requests: Mapping[str, Mapping[str, Any]] | None = None,
    request_state: str | None = None,
    *,
    state: Any = NO_STATE,
) -> InputRequired:
    """Ask the client for input and end this request.

    At least one of ``input_requests`` (non-empty, keys non-empty strings) and a state
    is required (basic/patterns/mrtr.mdx). Build the requests with ``snodo.asking.elicitation``,
    ``snodo.asking.sampling`` or ``snodo.asking.roots``. ``state`` is JSON data for the next round
    (``ctx.state_data`` there): the server seals it once, with the questions of the
    round, where ``request_state=ctx.seal(data)`` seals twice. ``request_state`` is a
    token sealed already (or echoed); pass one of the two.
    """
    requests = dict(input_requests or {})
    has_state = state is not NO_STATE
    if has_state and request_state is not None:
        raise ValueError("pass request_state or state, not both")
    if not requests and request_state is None and not has_state:
        raise ValueError("input_required needs input_requests, a state, or both")
    for key, request in requests.items():
        if not isinstance(key, str) or not key:
            raise ValueError("input request keys must be non-empty strings")
        # A dict (a built request is one) first: the Mapping ABC check is a Python call.
        if not isinstance(request, (dict, Mapping)) or not isinstance(request.get("method"), str):
            raise ValueError(f"input request {key!r} is not a request object")
    if request_state is not None and not isinstance(request_state, str):
        raise TypeError("request_state must be a string (seal it with ctx.seal or a Keyring)")
    built = InputRequired(requests, request_state, False, state)
    object.__setattr__(built, "watch", Watch())
    return built


def mark_taken(outcome: InputRequired) -> None:
    """``outcome`` goes on to the client: built and not dropped (``snodo.core.input_requests``)."""
    watch = outcome.watch
    if watch is not None:
        watch.taken = True


def url_required(*requests: Mapping[str, Any]) -> InputRequired:
    """End this request until the user has been to each URL (``elicitation.url(...)``
    requests, one or more): the client shows them and sends the request again, and the
    handler, run afresh, finds out from its own records whether the user finished.

    A modern client gets an InputRequiredResult of those requests (keys ``url-1``,
    ``url-2``, ...); a legacy session the error its revision defines for it (-32042,
    ``URLElicitationRequiredError``), after which its client retries on its own.
    """
    if not requests:
        raise ValueError("url_required needs at least one elicitation.url(...) request")
    for request in requests:
        params = request.get("params") if isinstance(request, Mapping) else None
        is_url = request.get("method") == "elicitation/create" and isinstance(params, Mapping)
        if not is_url or params.get("mode") != "url":  # type: ignore[union-attr]
            raise ValueError("url_required takes elicitation.url(...) requests only")
    keyed = {f"url-{number}": request for number, request in enumerate(requests, 1)}
    return InputRequired(keyed, None, url_required=True)


class ToolError(Exception):
    """A tool result with isError: true. Return it from a tool, or raise it from the tool
    or from one of its dependencies (``snodo.Depends``)."""

    def __init__(self, message: str, structured_content: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.structured_content = structured_content


def tool_error(message: str, structured_content: Any = None) -> ToolError:
    """Return (or raise) this from a tool to answer with ``isError: true``: the message
    as text, and ``structured_content`` when given; the client's model sees it and may
    retry."""
    return ToolError(message, structured_content)
