"""What a Client raises when a server fails it: one hierarchy, rooted at ``ClientError``.

A host that connects to servers its users pick must be able to catch everything a
broken or hostile server can cause with one ``except ClientError``, and tell the kinds
apart when it cares::

    ClientError
    ├── TransportError          the bytes did not get there or back (HTTP status, pipe, reset)
    │   └── HttpRefused         a non-2xx answer: its status and body
    ├── ProtocolViolation       the server answered in a way the protocol does not allow
    │   └── LimitExceeded       ... or sent more than a ``ClientLimits`` cap allows
    ├── RequestError            the server answered with a JSON-RPC error (code, message, data)
    │   └── TaskFailed          ... or a task ended ``failed`` with one (tasks' client half)
    ├── TaskCancelled           a task the client followed ended ``cancelled`` (the same)
    ├── RequestTimeout          no answer within ``request_timeout`` (or the deadline)
    │   └── DeadlineExceeded    the flow's ``deadline=`` passed (also a TooManyRounds)
    ├── TooManyRounds           the server kept asking for input past ``max_rounds``
    ├── UnsupportedServer       no revision in common (``snodo.client.era``)
    └── ModernOnly              a modern-only feature asked of a legacy server

``TaskFailed`` and ``TaskCancelled`` are the tasks extension's
(``snodo.extensions.tasks``), raised when its client half follows a task. These are the
only exceptions server traffic can raise out of a ``Client`` call;
the ones a caller causes (a bad argument) stay ``ValueError``/``TypeError``.
"""

from __future__ import annotations

from typing import Any

from snodo.core.errors import ErrorCode

__all__ = [
    "ClientError",
    "DeadlineExceeded",
    "HttpRefused",
    "LimitExceeded",
    "NotAuthorized",
    "OutputMismatch",
    "ProtocolViolation",
    "RequestError",
    "RequestTimeout",
    "TooManyRounds",
    "TransportError",
]


class ClientError(Exception):
    """Anything a server caused a Client call to fail with."""


class TransportError(ClientError):
    """The transport could not deliver a request or read its answer."""


class HttpRefused(TransportError):
    """The server answered a POST with a status outside 2xx: its status and body
    (JSON, else text; None when empty). The client reads the body to tell the
    server's era."""

    def __init__(self, status: int, body: Any, location: str = "") -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.location = location
        """Where a redirect (3xx) points: a client of MCP does not follow it."""


class NotAuthorized(HttpRefused):
    """The server refused the request's credentials: 401 (none, or not valid: sign in,
    or sign in again) or 403 (not enough, or not allowed). Never a question of the
    server's era, so the client does not try the other one. ``www_authenticate`` is the
    challenge, when the server sent one."""

    def __init__(self, status: int, body: Any, www_authenticate: str = "") -> None:
        super().__init__(status, body)
        self.www_authenticate = www_authenticate


class ProtocolViolation(ClientError):
    """The server answered in a way the protocol does not allow."""


class OutputMismatch(ProtocolViolation):
    """A tool's result does not honour the ``outputSchema`` it was listed with; the
    message names the tool and where the structured content failed."""


class LimitExceeded(ProtocolViolation):
    """The server sent more than a ``ClientLimits`` cap allows (bytes, notifications,
    pages, items, input requests); the message names the cap."""


class RequestError(ClientError):
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


class TooManyRounds(ClientError):
    """The server kept asking for input past ``max_rounds``, or past the deadline."""


class RequestTimeout(ClientError):
    """No answer came within the per-request timeout."""


class DeadlineExceeded(RequestTimeout, TooManyRounds):
    """The call's ``deadline=`` passed; a TooManyRounds too, as a flow past its
    deadline always was."""
