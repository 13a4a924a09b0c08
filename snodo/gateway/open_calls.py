"""A legacy backend's calls that wait on the front client's answers.

A legacy server asks its questions (elicitation, sampling, roots) as requests inside
its session while a ``tools/call`` is open. A modern front client answers questions
only with a retry of its own request, so the proxy keeps the backend call running in
this process (an ``OpenCall``), hands the questions to the front as an
``InputRequiredResult`` and, when the retry comes, answers the backend with the
front's answers and waits for the next question or the call's result.

Which call a question belongs to: the call's task sets ``CURRENT``, which the
question's handler sees where the client reads the answer stream in that task (HTTP);
a forwarded request that cannot carry questions (a list, a completion) sets it to
``REFUSE``. Otherwise (stdio, where one reader serves every request) the question goes
to the only open call, and one that could belong to several open calls is refused
rather than guessed. Calls are ``tools/call``, ``resources/read`` and ``prompts/get``,
the methods that may ask.

Bounds: at most ``limit`` calls are open at once in this process (1,000), and each front
client (``snodo.gateway.front``) at most ``per_client`` of them (16), so that one which
opens calls and never answers their questions blocks only itself until
``answer_timeout`` ends them.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

from snodo.core.errors import InvalidParams, McpError

__all__ = ["CURRENT", "FlowElsewhere", "OpenCall", "OpenCalls"]

CURRENT: ContextVar[OpenCall | None] = ContextVar("snodo_gateway_open_call", default=None)
"""The call a question asked in this context belongs to; ``REFUSE`` within a forwarded
request that cannot carry questions to its front (a list, a completion)."""


class FlowElsewhere(McpError):
    """A retry for a backend call this process does not hold."""

    default_message = "This flow's backend call is not open in this proxy process"


class OpenCall:
    """One backend call: its task, and the questions it asked that are not answered."""

    def __init__(self, flow: str, answer_timeout: float, owner: str = "") -> None:
        self.flow = flow
        self.owner = owner
        """The front client that opened it."""
        self.answer_timeout = answer_timeout
        self.task: asyncio.Task[dict[str, Any]] | None = None
        self.open: dict[str, tuple[dict[str, Any], asyncio.Future[Any]]] = {}
        self.asked = 0
        self.changed = asyncio.Event()
        self.front: list[Any] = []
        """The front request whose stream hears the call's notifications: the latest round."""

    async def ask(self, method: str, params: Mapping[str, Any]) -> Any:
        """The backend's question, waiting for the front's answer (at most
        ``answer_timeout`` seconds, then the backend gets an error)."""
        self.asked += 1
        key = f"q{self.asked}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.open[key] = ({"method": method, "params": dict(params)}, future)
        self.changed.set()
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.answer_timeout)
        finally:
            self.open.pop(key, None)

    def answer(self, responses: Mapping[str, Any]) -> None:
        """The front's answers, to the questions they name."""
        for key, response in responses.items():
            waiting = self.open.get(key)
            if waiting is not None and not waiting[1].done():
                waiting[1].set_result(response)

    async def next(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The questions waiting for the front, else (none, the call's result)."""
        assert self.task is not None
        while True:
            unanswered = {key: asked for key, (asked, done) in self.open.items() if not done.done()}
            if unanswered:
                return unanswered, None
            if self.task.cancelled():  # never a CancelledError into a request not cancelled
                raise McpError("The backend call ended before it answered")
            if self.task.done():
                return {}, self.task.result()
            self.changed.clear()
            changed = asyncio.ensure_future(self.changed.wait())
            try:
                await asyncio.wait({self.task, changed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()

    async def cancel(self) -> None:
        """End the backend call (the client cancels its request)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task


REFUSE = OpenCall("refuse", 0.0)
"""Marks a context whose questions are refused (``CURRENT``)."""


class OpenCalls:
    """This process's open backend calls, by flow id; at most ``limit`` at once, and
    ``per_client`` of one front client's."""

    def __init__(
        self, answer_timeout: float = 300.0, limit: int = 1000, per_client: int = 16
    ) -> None:
        self.answer_timeout = answer_timeout
        self.limit = limit
        self.per_client = per_client
        self.calls: dict[str, OpenCall] = {}
        self.held: dict[str, int] = {}
        """How many open calls each front client holds (none held: absent)."""

    def start(self, call: Callable[[], Awaitable[dict[str, Any]]], owner: str = "") -> OpenCall:
        """Open ``call`` for the front client ``owner``, within both bounds."""
        if len(self.calls) >= self.limit:
            raise McpError("Too many calls waiting for answers at this proxy")
        if self.held.get(owner, 0) >= self.per_client:
            raise McpError(
                f"This client has {self.per_client} calls waiting for its answers at this "
                "proxy: answer or cancel one first"
            )
        opened = OpenCall(secrets.token_urlsafe(12), self.answer_timeout, owner)
        token = CURRENT.set(opened)
        try:  # the task copies the context, CURRENT with it
            opened.task = asyncio.create_task(self._run(opened, call))
        finally:
            CURRENT.reset(token)
        self.calls[opened.flow] = opened
        self.held[owner] = self.held.get(owner, 0) + 1
        return opened

    async def _run(
        self, opened: OpenCall, call: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        try:
            return await call()
        finally:
            if self.calls.pop(opened.flow, None) is not None:
                left = self.held.pop(opened.owner, 1) - 1
                if left:
                    self.held[opened.owner] = left

    def get(self, flow: Any) -> OpenCall:
        found = self.calls.get(flow) if isinstance(flow, str) else None
        if found is None:
            raise InvalidParams("This flow's backend call has ended or expired; call again")
        return found

    def of_question(self) -> OpenCall | None:
        """The call a question belongs to: the current task's (``REFUSE`` within a
        forwarded request that has no call), else, where the question came on a stream
        of its own (stdio), the only call open; None when several are."""
        current = CURRENT.get()
        if current is not None:
            return current
        if len(self.calls) == 1:
            return next(iter(self.calls.values()))
        return None

    async def close(self) -> None:
        for opened in list(self.calls.values()):
            await opened.cancel()
