"""Results a handler returns that are more than plain content.

``input_required(...)`` ends the request with an InputRequiredResult (MRTR): the
client gathers the answers and retries. Nothing waits on the server in between.
``tool_error(...)`` is a tool result with ``isError: true``: the tool ran and failed
in a way the model should see, as opposed to a protocol error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import MISSING  # false once snodo is imported: see snodo/__init__.py

__all__ = ["MISSING", "InputRequired", "ToolError", "input_required", "tool_error"]


@dataclass(frozen=True, slots=True)
class InputRequired:
    """An InputRequiredResult in the making; admission checks it before it leaves."""

    input_requests: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    request_state: str | None = None

    def to_result(self) -> dict[str, Any]:
        """The InputRequiredResult as it goes on the wire, before admission checks it."""
        result: dict[str, Any] = {"resultType": "input_required"}
        if self.input_requests:
            result["inputRequests"] = dict(self.input_requests)
        if self.request_state is not None:
            result["requestState"] = self.request_state
        return result


def input_required(
    input_requests: Mapping[str, Mapping[str, Any]] | None = None,
    request_state: str | None = None,
) -> InputRequired:
    """Ask the client for input and end this request.

    At least one of ``input_requests`` (non-empty, keys non-empty strings) and
    ``request_state`` is required (basic/patterns/mrtr.mdx). Build the requests with
    ``snodo.elicitation``, ``snodo.sampling`` or ``snodo.roots``.
    """
    requests = dict(input_requests or {})
    if not requests and request_state is None:
        raise ValueError("input_required needs input_requests, request_state, or both")
    for key, request in requests.items():
        if not isinstance(key, str) or not key:
            raise ValueError("input request keys must be non-empty strings")
        # A dict (a built request is one) first: the Mapping ABC check is a Python call.
        if not isinstance(request, (dict, Mapping)) or not isinstance(request.get("method"), str):
            raise ValueError(f"input request {key!r} is not a request object")
    if request_state is not None and not isinstance(request_state, str):
        raise TypeError("request_state must be a string (seal it with snodo.state.seal)")
    return InputRequired(requests, request_state)


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
