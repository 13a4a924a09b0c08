"""subscriptions/listen: streams of list-changed and resource-updated notifications.

The core keeps no per-connection state; a listen request opens a ``Subscription``
that lives exactly as long as the transport's stream. The subscription first delivers
``notifications/subscriptions/acknowledged`` naming the notification types the server
will honour, then only those types, each tagged with the listen request's id in
``_meta`` under ``META_SUBSCRIPTION_ID`` (basic/patterns/subscriptions.mdx).

What this process raises is told to its own streams at once and handed to the
server's notification bus (``snodo.server.notify_bus``), which brings it to the streams of
the other workers; what the bus brings from them arrives through ``deliver``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from snodo.core.errors import InternalError, InvalidParams
from snodo.core.types import OpenStream
from snodo.revisions.authoring.protocol import META_SUBSCRIPTION_ID
from snodo.server.notify_bus import LocalBus, Notice, NotificationBus

__all__ = ["Subscription", "Subscriptions", "TaskNotice", "check_resource_subscriptions"]

MAX_OPEN_STREAMS = 1000
"""Listen streams one process holds open at once by default (``Limits(listen_streams=)``).
Each is a held connection; a listen beyond the cap is refused until one closes."""

MAX_RESOURCE_SUBSCRIPTIONS = 256
"""URIs one listen may watch; each is matched against every update, and echoed once in
the acknowledgement."""

MAX_SUBSCRIBED_URI_CHARS = 2048
"""Longest URI a listen may watch; with the count above, an acknowledgement stays under
about half a megabyte."""


class TaskNotice(Protocol):
    """A task as ``notifications/tasks`` tells it (the tasks extension's record is one):
    the streams hear of tasks without knowing how the extension keeps them."""

    @property
    def task_id(self) -> str: ...

    def detailed(self) -> dict[str, Any]:
        """The DetailedTask the notification carries."""
        ...


LIST_CHANGED = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}


def check_resource_subscriptions(uris: Any) -> list[str]:
    """The distinct URIs a listen asks to watch, in order; -32602 beyond the bounds."""
    distinct = list(dict.fromkeys(uris or ()))
    if len(distinct) > MAX_RESOURCE_SUBSCRIPTIONS:
        raise InvalidParams(
            f"Invalid params: at most {MAX_RESOURCE_SUBSCRIPTIONS} resourceSubscriptions"
        )
    if any(len(uri) > MAX_SUBSCRIBED_URI_CHARS for uri in distinct):
        raise InvalidParams(
            f"Invalid params: a subscribed URI is longer than {MAX_SUBSCRIBED_URI_CHARS}"
        )
    return distinct


@dataclass(eq=False, slots=True)
class Subscription(OpenStream):
    id: str | int
    honoured: dict[str, Any]
    send: Callable[[dict[str, Any]], None]
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the server ended the stream itself (``end``): the transport closes it."""
    defined: frozenset[str] | None = None
    """The notifications the stream's revision (and its extensions) define: no other
    is sent on it (None: any)."""

    def end(self) -> None:
        """End the stream gracefully: the listen request's completion result, with the
        subscription's id, then the transport closes the stream
        (basic/patterns/subscriptions.mdx, "Graceful Closure")."""
        if self.ended.is_set():
            return
        result = {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: self.id}}
        self.send({"jsonrpc": "2.0", "id": self.id, "result": result})
        self.ended.set()

    def _notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        if self.defined is not None and method not in self.defined:
            return  # the stream's revision has no such notification
        body = {"_meta": {META_SUBSCRIPTION_ID: self.id}, **(params or {})}
        self.send({"jsonrpc": "2.0", "method": method, "params": body})

    def acknowledge(self) -> None:
        self._notify("notifications/subscriptions/acknowledged", {"notifications": self.honoured})

    def wants(self, key: str) -> bool:
        return self.honoured.get(key) is True

    def watches(self, uri: str) -> bool:
        return any(
            uri == watched or uri.startswith(watched.rstrip("/") + "/")
            for watched in self.honoured.get("resourceSubscriptions", ())
        )


@dataclass(slots=True)
class Subscriptions:
    """The open listen streams of one server process."""

    max_open: int = MAX_OPEN_STREAMS
    bus: NotificationBus = field(default_factory=LocalBus)
    """Carries what this process raises to the other workers' streams."""
    watchers: list[Callable[[str], object]] = field(default_factory=list)
    """Told the key of every list change this process hears of (``toolsListChanged``),
    raised here or brought by the bus: what keeps an index of the list (tool search)."""
    update_watchers: list[Callable[[str], object]] = field(default_factory=list)
    """Told the URI of every resource update this process hears of (a response cache)."""
    _open: list[Subscription] = field(default_factory=list)
    _joined: list[Subscription] = field(default_factory=list)

    def open(
        self,
        request_id: str | int,
        honoured: dict[str, Any],
        send: Callable[[dict[str, Any]], None],
        defined: frozenset[str] | None = None,
    ) -> Subscription:
        """Open a listen stream; ``defined``: the notifications its revision defines."""
        if len(self._open) >= self.max_open:
            raise InternalError("Too many open subscriptions/listen streams; try again later")
        subscription = Subscription(request_id, honoured, send, defined=defined)
        subscription.acknowledge()
        self._open.append(subscription)
        return subscription

    def join(
        self,
        key: str,
        honoured: dict[str, Any],
        send: Callable[[dict[str, Any]], None],
        defined: frozenset[str] | None = None,
    ) -> Subscription:
        """Put a legacy session on the bus: no listen request, so no acknowledgement, and
        not counted against ``max_open`` (legacy sessions have their own bound)."""
        subscription = Subscription(key, honoured, send, defined=defined)
        self._joined.append(subscription)
        return subscription

    def end_all(self) -> int:
        """End every open listen stream gracefully (at shutdown); returns how many."""
        ending = list(self._open)
        for subscription in ending:
            subscription.end()
        return len(ending)

    def close(self, subscription: OpenStream) -> None:
        for group in (self._open, self._joined):
            if subscription in group:
                group.remove(subscription)

    def __contains__(self, stream: object) -> bool:
        return stream in self._open or stream in self._joined

    def __iter__(self) -> Iterator[Subscription]:
        return iter([*self._open, *self._joined])

    def deliver(self, notice: Notice) -> int:
        """Tell this process's streams that asked for ``notice``; returns how many were told.

        Notices raised here and notices the bus brings from other workers both come here.
        """
        told = 0
        if notice.kind == "list":
            for watcher in self.watchers:
                watcher(notice.key)
        elif notice.kind == "resource":
            for watcher in self.update_watchers:
                watcher(notice.key)
        for subscription in self:
            if notice.kind == "list" and subscription.wants(notice.key):
                subscription._notify(LIST_CHANGED[notice.key])
            elif notice.kind == "task" and notice.key in subscription.honoured.get("taskIds", ()):
                subscription._notify("notifications/tasks", notice.task)
            elif notice.kind == "resource" and subscription.watches(notice.key):
                subscription._notify("notifications/resources/updated", {"uri": notice.key})
            else:
                continue
            told += 1
        return told

    def _raise(self, notice: Notice) -> int:
        told = self.deliver(notice)
        self.bus.publish(notice)
        return told

    def list_changed(self, key: str) -> int:
        """Notify every stream that opted in to ``key``; returns how many here were told."""
        return self._raise(Notice("list", key))

    def task_changed(self, record: TaskNotice) -> int:
        """notifications/tasks, the full DetailedTask, to every stream that asked for it."""
        return self._raise(Notice("task", record.task_id, record.detailed()))

    def resource_updated(self, uri: str) -> int:
        return self._raise(Notice("resource", uri))
