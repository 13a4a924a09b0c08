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
* ``phase`` around a step worth its own child span (a bridged legacy round).

An extension that observes more is told the server's observer (``Extension.observe``)
and reports through what it finds there (the tasks extension: its task runs).

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
from collections.abc import Mapping
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
    "outgoing_trace_context",
]

Attributes = Mapping[str, str | int | float | bool]
"""Attribute values an observer records as they are (OpenTelemetry's scalar kinds)."""


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
