"""Whose legacy HTTP sessions are whose, so that one client cannot take every place.

A session's owner is its principal, or without authentication the client's address.
``Owners`` keeps each owner's session ids in the order they were opened; at
``max_sessions_per_principal`` a new session ends that owner's longest idle one
(``make_room``), and when every one of them is in use the new one is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from snodo.legacy.shared import Entry

__all__ = ["Owners", "owner_of"]


def owner_of(principal: str | None, address: str | None) -> str:
    return f"principal:{principal}" if principal is not None else f"address:{address}"


class Owners:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.owned: dict[str, dict[str, None]] = {}

    def add(self, owner: str, session_id: str) -> None:
        self.owned.setdefault(owner, {})[session_id] = None

    def forget(self, owner: str, session_id: str) -> None:
        owned = self.owned.get(owner)
        if owned is not None:
            owned.pop(session_id, None)
            if not owned:
                del self.owned[owner]

    def make_room(
        self, owner: str, sessions: Mapping[str, Entry], end: Callable[[str], None]
    ) -> bool:
        """Below the owner's cap, or brought below it by ending (``end``) the owner's
        longest idle session; False when every one of them is in use."""
        owned = self.owned.get(owner)
        if owned is None or len(owned) < self.cap:
            return True
        idle = [
            entry
            for key in owned
            if (entry := sessions.get(key)) is not None and not entry.busy and not entry.streaming
        ]
        if not idle:
            return False
        end(min(idle, key=lambda entry: entry.last_seen).session.id)
        return True
