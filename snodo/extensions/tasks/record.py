"""One task as the store keeps it, the status machine it moves through, and its wire shapes.

Theory of operation
-------------------
A task is a record in a shared store (``snodo.extensions.tasks.store``), not an object in one
process: every worker reads and changes it through the store, and only the store's
atomic read-modify-write (``TaskStore.update``) changes it. The work itself runs in
the process that created the task (its ``owner``), which holds a lease on the record
and renews it while it works.

The status machine is data (``TRANSITIONS``): ``working`` and ``input_required``
move to each other and to the terminal ``completed``, ``failed`` and ``cancelled``;
a terminal task never moves again (ext-tasks/tasks.md, "Task Status"). ``advance``
refuses any other move, so a late writer (a cancellation racing the result) cannot
overwrite a terminal status.

The record is plain JSON (``to_json``/``from_json``) so the three stores keep the
same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal, Protocol

__all__ = [
    "MAX_RECORDS",
    "TERMINAL",
    "TRANSITIONS",
    "Change",
    "Status",
    "StoreFull",
    "TaskRecord",
    "TaskView",
    "advance",
    "iso",
]

Status = Literal["working", "input_required", "completed", "failed", "cancelled"]

TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
"""The statuses a task never leaves (ext-tasks/tasks.md, "Task Status")."""

TRANSITIONS: Final[dict[str, frozenset[str]]] = {
    "working": frozenset({"input_required", "completed", "failed", "cancelled"}),
    "input_required": frozenset({"working", "completed", "failed", "cancelled"}),
    "completed": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
"""The statuses each status may move to; ``advance`` refuses any other move."""

MAX_RECORDS: Final = 10_000
"""Records a store keeps by default, live and finished (``snodo.extensions.tasks.store``)."""


class StoreFull(Exception):
    """A store's create found ``max_records`` records, none of them finished: try later."""

    def __init__(self, max_records: int) -> None:
        super().__init__(f"the task store holds {max_records} unfinished tasks")


def iso(seconds: float) -> str:
    """Unix seconds as an ISO 8601 UTC timestamp with milliseconds."""
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


class TaskView(Protocol):
    """What an observer reads of a task (``TaskRecord`` is one)."""

    @property
    def task_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def created_at(self) -> float: ...
    @property
    def updated_at(self) -> float: ...
    @property
    def error(self) -> Mapping[str, Any] | None: ...
    @property
    def trace_links(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task as every store keeps it: plain JSON-able data, changed only by a store's
    ``update``. Times are Unix seconds; ``result`` or ``error`` is the outcome once
    ``completed`` or ``failed``; ``cancel_requested`` asks the owner to stop the work."""

    task_id: str
    status: Status
    created_at: float
    updated_at: float
    ttl_ms: int | None
    """From creation; None keeps the task until it is deleted."""
    poll_interval_ms: int
    principal: str | None
    """Who created it; only the same principal may see or change it."""
    owner: str
    """The worker whose process runs the work."""
    lease_until: float
    """The owner renews this while it works; past it, the owner is presumed dead."""
    status_message: str | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    """Outstanding requests to the client, by key."""
    answers: dict[str, Any] = field(default_factory=dict)
    """Answers delivered through tasks/update that the owner has not consumed yet."""
    issued: tuple[str, ...] = ()
    """Every input request key ever issued: a key is never used twice in a task."""
    state: str | None = None
    """What the work kept for its next round (``ctx.seal`` inside a task)."""
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    cancel_requested: bool = False
    trace_links: tuple[str, ...] = ()
    """Where the tasks/update and tasks/cancel requests that moved the task were traced
    (observer marks, ``snodo.core.observe``): the owner links its run to them."""

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        """Whether the TTL has run out at ``now`` (never without a TTL)."""
        return self.ttl_ms is not None and now >= self.created_at + self.ttl_ms / 1000

    def expires_at(self) -> float | None:
        """When the TTL runs out, in Unix seconds; None without a TTL."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def to_json(self) -> str:
        """Every field as compact JSON with sorted keys: the bytes every store keeps."""
        # Not asdict: it rebuilds dict subclasses (the immutable built input requests).
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> TaskRecord:
        """The record ``to_json`` wrote (its tuples back as tuples)."""
        data = json.loads(text)
        data["issued"] = tuple(data.get("issued", ()))
        data["trace_links"] = tuple(data.get("trace_links", ()))
        return cls(**data)

    def task(self) -> dict[str, Any]:
        """The Task fields every wire shape starts with."""
        wire: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": iso(self.created_at),
            "lastUpdatedAt": iso(self.updated_at),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if self.status_message is not None:
            wire["statusMessage"] = self.status_message
        return wire

    def detailed(self) -> dict[str, Any]:
        """The DetailedTask: what tasks/get answers and notifications/tasks carries."""
        wire = self.task()
        if self.status == "input_required":
            wire["inputRequests"] = dict(self.input_requests)
        elif self.status == "completed":
            wire["result"] = dict(self.result or {})
        elif self.status == "failed":
            wire["error"] = dict(self.error or {"code": -32603, "message": "Internal error"})
        return wire


Change = Callable[[TaskRecord], TaskRecord | None]
"""What a store's ``update`` applies: the changed record, or None to keep it."""


def advance(record: TaskRecord, status: Status, now: float, **changes: Any) -> TaskRecord:
    """The record moved to ``status``; ValueError for a move the machine does not allow.

    Staying in a non-terminal status is allowed (new input requests, a status message).
    """
    if status != record.status and status not in TRANSITIONS[record.status]:
        raise ValueError(f"task {record.task_id}: {record.status} cannot become {status}")
    if record.terminal:
        raise ValueError(f"task {record.task_id} is {record.status} already")
    return replace(record, status=status, updated_at=now, **changes)
