"""One legacy client's session: what its initialize settled, and its requests in flight.

A session is transport-free. It learns the negotiated version and the client's
capabilities at ``initialize``, keeps the log level ``logging/setLevel`` chose and the
resource URIs the client subscribed to (through a ``Subscription`` on the server's one
subscription bus), and tracks the requests the server sends the client: each gets an
id from this session, a future that ``resolve`` completes when the client's response
comes in, and a place among at most ``max_pending_requests``. Where messages go is the
caller's: ``request`` takes the function that delivers this one message, and
``notify`` is where messages unrelated to any request go (stdout on stdio, the GET
stream on HTTP; dropped while there is none).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Mapping
from typing import Any

from snodo.core.context import Emit
from snodo.core.observe import QUIET, Observer
from snodo.legacy.store import SessionRecord
from snodo.revisions import REVISIONS
from snodo.server.legacy_limits import LegacyLimits
from snodo.server.subscriptions import Subscription, Subscriptions

__all__ = ["ClientAnswerError", "LegacySession", "TooManyPending"]


class ClientAnswerError(Exception):
    """The client answered a server-to-client request with an error, or not in time."""


class TooManyPending(ClientAnswerError):
    """The session already waits on ``max_pending_requests`` answers."""


def _drop(_: dict[str, Any]) -> None:
    return None


class LegacySession:
    def __init__(
        self,
        limits: LegacyLimits,
        *,
        principal: str | None = None,
        session_id: str | None = None,
        id_prefix: str | None = None,
    ) -> None:
        self.id = session_id or secrets.token_urlsafe(24)
        """Visible ASCII only (the legacy basic/transports.mdx, "Session Management")."""
        self.id_prefix = id_prefix
        """With a shared store: this worker's origin, which the ids of the requests it
        sends the client begin with (``ORIGIN.N``), so any worker can route an answer."""
        self.limits = limits
        self.principal = principal
        self.owner = ""
        """Who opened it, with a shared store (``snodo.legacy.owners.owner_of``)."""
        self.version: str | None = None
        self.client_capabilities: Mapping[str, Any] = {}
        self.client_info: Mapping[str, Any] | None = None
        self.log_level: str | None = limits.log_level
        """The level ``logging/setLevel`` set, else the server's default for sessions."""
        self.notify: Emit = _drop
        self.subscription: Subscription | None = None
        self._bus: Subscriptions | None = None
        self._pending: dict[int | str, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self.closed = False
        self.ending: str | None = None
        """Why nothing more is asked of the client: the process is shutting down."""
        self.stateless = False
        """Made for one POST of a server that keeps no sessions: it cannot ask anything."""
        self._observer: Observer = QUIET

    # -- initialize --------------------------------------------------------------------

    def start(
        self,
        version: str,
        capabilities: Mapping[str, Any],
        client_info: Mapping[str, Any] | None,
        bus: Subscriptions,
        observer: Observer = QUIET,
    ) -> None:
        """Record what initialize settled and join the server's subscription bus.

        Legacy list-changed notifications need no opt-in beyond the server's declared
        capability, so the session listens to all three; resource updates only for the
        URIs it subscribes to.
        """
        self.version = version
        self.client_capabilities = capabilities
        self.client_info = client_info
        if self.subscription is None:
            honoured: dict[str, Any] = {
                "toolsListChanged": True,
                "promptsListChanged": True,
                "resourcesListChanged": True,
                "resourceSubscriptions": [],
            }
            self._bus = bus
            revision = REVISIONS.by_version.get(version)
            defined = None if revision is None else revision.server_notifications
            self.subscription = bus.join(self.id, honoured, self._unsolicited, defined)
            self._observer = observer
            observer.legacy_sessions(1)

    def restore(self, record: SessionRecord, bus: Subscriptions, observer: Observer) -> None:
        """Take a shared record's facts (``snodo.legacy.store``): on the first request
        this worker sees of the session, and again on every later one."""
        self.start(record.version, record.capabilities, record.client_info, bus, observer)
        self.log_level = record.log_level
        self.owner = record.owner
        assert self.subscription is not None
        self.subscription.honoured["resourceSubscriptions"] = list(record.subscriptions)

    def record(self) -> SessionRecord:
        """This session's facts, for a shared store."""
        assert self.version is not None
        uris = self.subscription.honoured["resourceSubscriptions"] if self.subscription else []
        return SessionRecord(
            self.id,
            self.principal,
            self.version,
            dict(self.client_capabilities),
            None if self.client_info is None else dict(self.client_info),
            self.log_level,
            list(uris),
            self.owner,
        )

    def _unsolicited(self, note: dict[str, Any]) -> None:
        """A notification from the bus, without the modern subscription id."""
        params = note.get("params")
        if isinstance(params, dict) and "_meta" in params:
            params = {key: value for key, value in params.items() if key != "_meta"}
            note = (
                {**note, "params": params}
                if params
                else {k: v for k, v in note.items() if k != "params"}
            )
        self.notify(note)

    def subscribe(self, uri: str) -> bool:
        """Watch ``uri``; False when the session already watches as many as it may."""
        assert self.subscription is not None
        uris: list[str] = self.subscription.honoured["resourceSubscriptions"]
        if uri in uris:
            return True
        if len(uris) >= self.limits.max_subscriptions:
            return False
        uris.append(uri)
        return True

    def unsubscribe(self, uri: str) -> None:
        if self.subscription is not None:
            uris: list[str] = self.subscription.honoured["resourceSubscriptions"]
            if uri in uris:
                uris.remove(uri)

    # -- server-to-client requests ------------------------------------------------------

    async def request(
        self, method: str, params: Mapping[str, Any], send: Emit, timeout: float
    ) -> dict[str, Any]:
        """Send one request to the client and wait for its result.

        Raises ``ClientAnswerError`` for an error answer, a timeout, a closed session or
        a full pending table. Cancelled (the flow ended), it tells the client so.
        """
        if self.closed:
            raise ClientAnswerError("the session is closed")
        if self.ending is not None:
            raise ClientAnswerError(self.ending)
        if len(self._pending) >= self.limits.max_pending_requests:
            raise TooManyPending("too many requests are waiting for the client")
        self._next_id += 1
        request_id: int | str = self._next_id
        if self.id_prefix is not None:
            request_id = f"{self.id_prefix}.{self._next_id}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)})
            return await asyncio.wait_for(future, timeout)
        except TimeoutError as exc:
            self._cancelled(request_id, send, "timed out")
            raise ClientAnswerError(f"no answer to {method} in time") from exc
        except asyncio.CancelledError:
            self._cancelled(request_id, send, "the request was cancelled")
            raise
        finally:
            self._pending.pop(request_id, None)

    def _cancelled(self, request_id: int | str, send: Emit, reason: str) -> None:
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
        with contextlib.suppress(Exception):
            send(note)

    def resolve(self, response_id: object, result: Any, error: Any) -> bool:
        """Complete the request the client answered; False for an id nobody waits on."""
        if not isinstance(response_id, int | str) or isinstance(response_id, bool):
            return False
        future = self._pending.get(response_id)
        if future is None or future.done():
            return False
        if isinstance(result, dict):
            future.set_result(result)
        else:
            message = error.get("message") if isinstance(error, dict) else None
            future.set_exception(ClientAnswerError(str(message or "the client refused")))
        return True

    def end_rounds(self, reason: str) -> None:
        """A shutdown has begun: fail what waits on the client and ask it nothing more,
        so a bridged round whose client vanished does not hold the process for its
        ``round_timeout``. The session itself stays (another worker, or this one after a
        restart, may serve it from a shared store)."""
        self.ending = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ClientAnswerError(reason))

    @property
    def pending(self) -> int:
        return len(self._pending)

    def close(self) -> None:
        """End the session: fail what waits on the client, leave the subscription bus."""
        if not self.closed and self.subscription is not None:
            self._observer.legacy_sessions(-1)
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ClientAnswerError("the session ended"))
        self._pending.clear()
        if self.subscription is not None and self._bus is not None:
            self._bus.close(self.subscription)
        self.subscription = None
        self.notify = _drop
