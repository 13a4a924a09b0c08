"""What the server tells an observer, and the observer that does nothing.

Theory of operation
-------------------
Tracing, metrics and request logs are optional (``snodo.otel`` implements them on the
OpenTelemetry API, extra ``snodo[otel]``), so the runtime names none of them. It speaks
to one narrow ``Observer`` at a few points instead:

* ``request`` when a parsed request starts, returning an ``Observation`` that hears
  what happens to that request: its echoed state accepted (with the flow mark sealed
  in it) or refused (with the reason, which stays on the server), the flow mark to seal
  into the next state, and the response it ends with;
* ``listen_streams`` and ``legacy_sessions`` when those gauges move;
* ``phase`` around a step worth its own child span (a bridged legacy round);
* the task engine (``snodo.tasks``) reports each task: ``task_changed`` on every status
  change this worker makes (creation included), ``task_run`` around the owner's run of
  its work, ``task_resumed`` when the owner takes an input round's answers, and
  ``task_mark`` for where a tasks/update or tasks/cancel request is traced, kept in the
  task's record so the owner, maybe another process, can link its run to it.

A flow of Multi Round-Trip Requests is several requests with nothing on the server in
between, so the observer links them through the sealed state: the mark it hands out is
sealed beside the handler's data, under the same MAC (or encryption), and comes back on
the retry. The client sees it exactly as readable as it sees the state.

Off is free: ``Server`` holds ``QUIET`` unless given an observer, and tests for it by
identity before doing anything else, so an unobserved request allocates nothing extra.
``QUIET`` still answers every call, so collaborators may call it unconditionally.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from snodo.core.jsonrpc import Request

__all__ = [
    "QUIET",
    "Attributes",
    "Observation",
    "Observer",
    "Quiet",
    "TaskView",
    "outgoing_trace_context",
]

Attributes = Mapping[str, str | int | float | bool]
"""Attribute values an observer records as they are (OpenTelemetry's scalar kinds)."""


class TaskView(Protocol):
    """What an observer reads of a task (``snodo.tasks.TaskRecord`` is one): the core
    reports tasks without depending on how the tasks extension keeps them."""

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


class Observation(Protocol):
    """One request, as its observer follows it."""

    def state_accepted(self, flow: str | None) -> None:
        """The request's echoed state verified; ``flow`` is the mark sealed in it."""

    def state_refused(self, reason: str) -> None:
        """The echoed state was refused, for ``reason`` (never sent to the client)."""

    def flow_mark(self) -> str | None:
        """The mark to seal into the state this request hands out (None: no mark)."""

    def finish(self, response: Mapping[str, Any] | None) -> None:
        """The request ended with ``response`` (None: it opened a stream)."""

    def cancelled(self) -> None:
        """The request ended without a response: its task was cancelled."""


class Observer(Protocol):
    """Where the server reports what it does; ``QUIET`` when nobody listens."""

    def request(
        self, request: Request, era: str, transport: str, headers: Mapping[str, str]
    ) -> Observation:
        """A request starts: ``era`` is "modern" or "legacy", ``headers`` the transport's."""

    def listen_streams(self, delta: int) -> None:
        """Open listen streams went up or down by ``delta``."""

    def legacy_sessions(self, delta: int) -> None:
        """Open legacy sessions went up or down by ``delta``."""

    def phase(self, name: str, attributes: Attributes) -> AbstractContextManager[None]:
        """A step within the current request, as a child of its span."""

    def task_changed(self, record: TaskView, previous: str | None) -> None:
        """This worker created a task (``previous`` None) or changed its status."""

    def task_run(self, task_id: str, tool: str) -> AbstractContextManager[None]:
        """The owner runs the task's work inside this, from creation to its end."""

    def task_resumed(self, record: TaskView) -> None:
        """The owner took an input round's answers and calls the work again."""

    def task_mark(self) -> str | None:
        """Where the current request is traced, for the task's run to link to (or None)."""


_NOTHING: Final[nullcontext[None]] = nullcontext()


class Quiet:
    """The observer that observes nothing (and its own observation)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "QUIET"

    def request(
        self, request: Request, era: str, transport: str, headers: Mapping[str, str]
    ) -> Observation:
        return self

    def listen_streams(self, delta: int) -> None:
        pass

    def legacy_sessions(self, delta: int) -> None:
        pass

    def phase(self, name: str, attributes: Attributes) -> AbstractContextManager[None]:
        return _NOTHING

    def task_changed(self, record: TaskView, previous: str | None) -> None:
        pass

    def task_run(self, task_id: str, tool: str) -> AbstractContextManager[None]:
        return _NOTHING

    def task_resumed(self, record: TaskView) -> None:
        pass

    def task_mark(self) -> str | None:
        return None

    def state_accepted(self, flow: str | None) -> None:
        pass

    def state_refused(self, reason: str) -> None:
        pass

    def flow_mark(self) -> str | None:
        return None

    def finish(self, response: Mapping[str, Any] | None) -> None:
        pass

    def cancelled(self) -> None:
        pass


QUIET: Final = Quiet()


_NO_CONTEXT: Final[Mapping[str, str]] = {}


def outgoing_trace_context() -> Mapping[str, str]:
    """The current OpenTelemetry context as ``traceparent``/``tracestate``/``baggage``.

    What the client puts in each request's ``_meta`` and, over HTTP, its headers. Until
    something has imported OpenTelemetry there is no current span to propagate, so this
    costs a dictionary look-up and imports nothing.
    """
    if "opentelemetry.context" not in sys.modules:
        return _NO_CONTEXT
    carrier: dict[str, str] = {}
    importlib.import_module("opentelemetry.propagate").inject(carrier)
    return carrier
