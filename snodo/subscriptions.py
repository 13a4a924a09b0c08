"""subscriptions/listen: streams of list-changed and resource-updated notifications.

The core keeps no per-connection state; a listen request opens a ``Subscription``
that lives exactly as long as the transport's stream. The subscription first delivers
``notifications/subscriptions/acknowledged`` naming the notification types the server
will honour, then only those types, each tagged with the listen request's id in
``_meta`` under ``META_SUBSCRIPTION_ID`` (basic/patterns/subscriptions.mdx).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from snodo_wire.protocol import META_SUBSCRIPTION_ID

__all__ = ["Subscription", "Subscriptions"]


LIST_CHANGED = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}


@dataclass(eq=False, slots=True)
class Subscription:
    id: str | int
    honoured: dict[str, Any]
    send: Callable[[dict[str, Any]], None]

    def _notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
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

    _open: list[Subscription] = field(default_factory=list)

    def open(
        self,
        request_id: str | int,
        honoured: dict[str, Any],
        send: Callable[[dict[str, Any]], None],
    ) -> Subscription:
        subscription = Subscription(request_id, honoured, send)
        subscription.acknowledge()
        self._open.append(subscription)
        return subscription

    def close(self, subscription: Subscription) -> None:
        if subscription in self._open:
            self._open.remove(subscription)

    def __iter__(self) -> Iterator[Subscription]:
        return iter(list(self._open))

    def list_changed(self, key: str) -> int:
        """Notify every stream that opted in to ``key``; returns how many were told."""
        told = 0
        for subscription in self:
            if subscription.wants(key):
                subscription._notify(LIST_CHANGED[key])
                told += 1
        return told

    def resource_updated(self, uri: str) -> int:
        told = 0
        for subscription in self:
            if subscription.watches(uri):
                subscription._notify("notifications/resources/updated", {"uri": uri})
                told += 1
        return told
