"""What a part of the Client sends with: a request's raw result, and when the call ends.

The Client's parts that send on their own (its listings, its tool search, ...) are handed
a ``Requester`` rather than the Client, as httpx's ``Client`` hands its parts a transport:
they see one way to send and the call's deadline, never the rest of the Client, and the
Client's public methods delegate to them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Requester", "Send"]


class Send(Protocol):
    """Sends one request in whichever era the server speaks; returns its raw result (a
    kept one when the client's cache holds it), or raises the client's errors."""

    def __call__(
        self,
        method: str,
        params: dict[str, Any],
        modern_only: bool = False,
        until: float | None = None,
    ) -> Awaitable[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class Requester:
    """The Client's ``send``, and ``until``: when the call under way must end (its
    deadline from now, as ``time.monotonic()``), None without one."""

    send: Send
    until: Callable[[], float | None]
