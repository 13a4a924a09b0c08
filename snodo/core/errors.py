"""Errors that answer a request with a JSON-RPC error.

Any handler, middleware or helper may raise one of these; the server turns it into the
error response its ``code`` names, for tools as for resources and prompts. Anything
else raised by a resource or prompt handler becomes a generic internal error (the
detail goes to the log, never to the peer); in a tool it becomes an ``isError`` result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from snodo.revisions.authoring.errors import ErrorCode

__all__ = [
    "ErrorCode",
    "HeaderMismatch",
    "InsufficientScope",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "InvalidState",
    "McpError",
    "MethodNotFound",
    "MissingClientCapability",
    "ParseError",
    "RateLimited",
    "ResourceNotFound",
    "UnsupportedProtocolVersion",
    "capability_names",
    "caused_by",
    "retry_after",
]


class McpError(Exception):
    """Base of every error that becomes a JSON-RPC error response."""

    code: int = ErrorCode.INTERNAL_ERROR
    default_message: str = "Internal error"

    def __init__(self, message: str | None = None, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)

    def to_error(self) -> dict[str, Any]:
        """The ``error`` member of the response."""
        error: dict[str, Any] = {"code": int(self.code), "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(McpError):
    """-32700: the message is not JSON the server will read (malformed, NaN or Infinity,
    nested too deep, too many values)."""

    code = ErrorCode.PARSE_ERROR
    default_message = "Parse error: invalid JSON"


class InvalidRequest(McpError):
    """-32600: the message is not a valid JSON-RPC request, or a legacy session cannot
    take it (no session, not initialized or initialized already, a bad version header)."""

    code = ErrorCode.INVALID_REQUEST
    default_message = "Invalid request"


class MethodNotFound(McpError):
    """-32601: the server does not offer the requested method (in the revision asked for)."""

    code = ErrorCode.METHOD_NOT_FOUND
    default_message = "Method not found"


class InvalidParams(McpError):
    """-32602: the params are wrong for the method (a missing or malformed field, an unknown
    tool or prompt, a bad cursor)."""

    code = ErrorCode.INVALID_PARAMS
    default_message = "Invalid params"


class InternalError(McpError):
    """-32603: the server failed to answer; the detail goes to its log, never to the peer."""

    code = ErrorCode.INTERNAL_ERROR
    default_message = "Internal error"


class HeaderMismatch(McpError):
    """-32020: over HTTP, a required ``Mcp-*`` header is missing or disagrees with the body
    (protocol version, method, name or a mirrored param)."""

    code = ErrorCode.HEADER_MISMATCH
    default_message = "Header mismatch"


class MissingClientCapability(McpError):
    """-32021: the request needs client capabilities it did not declare.

    ``required`` is one ClientCapabilities object naming every missing need. The
    default message names them too, as dotted paths: some clients show a user only the
    message, never ``data``.
    """

    code = ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
    default_message = "Missing required client capability"

    def __init__(self, required: dict[str, Any], message: str | None = None) -> None:
        if message is None and required:
            names = ", ".join(capability_names(required))
            message = f"This request needs the client capabilities {names}"
        super().__init__(message, {"requiredCapabilities": required})
        self.required = required


def capability_names(capabilities: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``{"elicitation": {"form": {}}, "sampling": {}}`` -> ``["elicitation.form", "sampling"]``:
    each path that ends in an empty object (or a non-object), in the object's order."""
    names: list[str] = []
    for key, value in capabilities.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            names.extend(capability_names(value, f"{name}."))
        else:
            names.append(name)
    return names


class UnsupportedProtocolVersion(McpError):
    """-32022: the request asks for a protocol version this server does not speak;
    ``data`` names the ``requested`` version and the ``supported`` ones."""

    code = ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
    default_message = "Unsupported protocol version"

    def __init__(self, requested: str, supported: list[str]) -> None:
        super().__init__(None, {"supported": supported, "requested": requested})


class ResourceNotFound(InvalidParams):
    """resources/read of a URI the server does not have (-32602 with ``data.uri``)."""

    default_message = "Resource not found"

    def __init__(self, uri: str) -> None:
        super().__init__(None, {"uri": uri})


class InvalidState(InvalidParams):
    """The request state failed verification.

    One message whatever failed (signature, expiry, binding, key id, size, replay), so
    the wire never tells a forger which check to work on.
    """

    default_message = "Invalid request state"

    def __init__(self, reason: str = "invalid") -> None:
        super().__init__(None, None)
        self.reason = reason
        """Which check failed, for the server's own metrics and logs; never on the wire."""


class InsufficientScope(McpError):
    """The caller's access token lacks scopes this request needs (RFC 6750 section 3.1).

    ``scopes`` is every scope the operation needs, not only the missing ones, so a client
    steps up once (basic/authorization: all required scopes in a single challenge). Over
    HTTP the transport answers 403 with an ``insufficient_scope`` challenge naming them;
    anywhere else it is this JSON-RPC error, -32600 with ``data.requiredScopes``.
    """

    code = ErrorCode.INVALID_REQUEST
    default_message = "Insufficient scope"

    def __init__(self, scopes: Iterable[str]) -> None:
        self.scopes = tuple(sorted(set(scopes)))
        super().__init__(None, {"requiredScopes": list(self.scopes)})


RATE_LIMITED = -32000
"""The code of a refusal for rate: JSON-RPC's range for a server's own errors, as other
MCP servers use it for this; ``data.retryAfterMs`` is what tells it apart."""


class RateLimited(McpError):
    """The caller has used its rate for now; ``data.retryAfterMs`` says when to try again.
    Over HTTP the answer is also 429 with ``Retry-After`` (a legacy session's, 200 with
    the header)."""

    code = RATE_LIMITED
    default_message = "Rate limited"

    def __init__(self, retry_after_ms: int) -> None:
        self.retry_after_ms = max(1, int(retry_after_ms))
        seconds = self.retry_after_ms / 1000
        super().__init__(
            f"Rate limited: try again in {seconds:g} s", {"retryAfterMs": self.retry_after_ms}
        )


def retry_after(response: Mapping[str, Any] | None) -> int | None:
    """The whole seconds of ``Retry-After`` for a response refusing for rate, else None."""
    error = (response or {}).get("error")
    if not isinstance(error, Mapping) or error.get("code") != RATE_LIMITED:
        return None
    data = error.get("data")
    wait = data.get("retryAfterMs") if isinstance(data, Mapping) else None
    if type(wait) is not int or wait < 0:
        return None
    return -(-wait // 1000)


E = TypeVar("E", bound=BaseException)


def caused_by(error: E, cause: BaseException) -> E:
    """``error`` with ``cause`` as its ``__cause__``, as ``raise error from cause`` would
    make it: compiled (mypyc) coroutines drop the ``from`` part, and middleware such as
    ``Retry`` and ``ErrorHandling`` read the cause of an internal error."""
    error.__cause__ = cause
    return error
