"""The tasks extension's client half (``TasksClient``): a handle that can be stored
anywhere, and the loop that follows a task to its end.

Theory of operation (ext-tasks/tasks.md). A client that declares the extension
(``TasksClient(client)``, on the client's public extension API) may get
a CreateTaskResult (``resultType: "task"``) instead of a ``tools/call`` result; in
answer to any other method that is an invalid response (``ProtocolViolation``).
``follow`` then polls ``tasks/get`` at the interval the server advises (it may change
on every poll), and ends with the task: the result when it completed, ``TaskFailed``
(a ``RequestError`` carrying the task's JSON-RPC error) when it failed,
``TaskCancelled`` when it was cancelled. A task that needs input is answered with the
same handlers, the same checks and the same ``max_rounds`` as an MRTR flow, through
``tasks/update``; every input request key is answered once (keys are unique over a
task's life, so a key already answered is never shown to the user again).

The call's deadline bounds the task too: when the next poll would come after it, the
client sends ``tasks/cancel`` and raises ``DeadlineExceeded``. A followed task that the
client gives up on for any other reason (a refused input request, a failing handler,
too many rounds, the caller cancelling) is cancelled the same way, so a failed call
leaves no work running on the server; the cancel is best effort, bounded by
``ClientLimits.close_grace``. In manual mode the caller owns the task: only the
deadline cancels it.

A ``TaskHandle`` is plain data (``to_json``/``from_json``): one process can store it,
and any other client, in any process, against any worker sharing the server's task
store, can resume the task from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from snodo.client.errors import (
    ClientError,
    DeadlineExceeded,
    ProtocolViolation,
    RequestError,
    TooManyRounds,
)
from snodo.client.extensions import ClientExtension, Declaring, Following
from snodo.client.handlers import InputHandlers
from snodo.client.results import RESULT_MODELS, complete_result, validated
from snodo.client.rounds import FlowBounds
from snodo.revisions.tasks import CreateTaskResult
from snodo.revisions.tasks.adapters import get_task_result
from snodo.revisions.tasks.protocol import EXTENSION_ID

if TYPE_CHECKING:
    from snodo.client import Client

__all__ = [
    "TASK_METHODS",
    "TaskCancelled",
    "TaskFailed",
    "TaskHandle",
    "TasksClient",
    "cancel",
    "follow",
]

Call = Callable[[str, dict[str, Any], float | None], Awaitable[dict[str, Any]]]
"""Sends one request (method, params), bounded by a ``time.monotonic()`` instant or
not; returns its result."""

TASK_METHODS = frozenset({"tools/call"})
"""The requests a server may answer with a task (ext-tasks/tasks.md, "Supported Methods")."""

DEFAULT_POLL_MS = 1000
"""The poll interval when the server advises none."""

MIN_POLL_MS = 10
"""The shortest interval honoured: a server advising less is polled this often."""


class TaskFailed(RequestError):
    """The task ended ``failed``: a ``RequestError`` with the JSON-RPC error it failed
    with, so a caller catches the same type whether a call failed at once or as a task."""

    def __init__(self, task_id: str, error: Mapping[str, Any]) -> None:
        super().__init__(int(error["code"]), str(error["message"]), error.get("data"))
        self.task_id = task_id


class TaskCancelled(ClientError):
    """The task ended ``cancelled`` (by this client, another one, or the server)."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task {task_id} was cancelled")
        self.task_id = task_id


@dataclass(frozen=True, slots=True)
class TaskHandle:
    """A task to follow, as plain data: what any client needs to resume it."""

    method: str
    """The request that created the task; its result model is that method's."""
    task_id: str
    poll_interval_ms: int = DEFAULT_POLL_MS
    """The last interval the server advised."""
    answered: tuple[str, ...] = ()
    """Input request keys already answered, never answered again."""
    input_requests: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Input requests waiting for an answer (a manual resume stopped for them)."""

    @classmethod
    def created(cls, method: str, result: Mapping[str, Any]) -> TaskHandle:
        """The handle of a task a server answered ``method`` with (a CreateTaskResult)."""
        if method not in TASK_METHODS:
            raise ProtocolViolation(f"a task in answer to {method}, which cannot have one")
        task = validated(CreateTaskResult, result)
        return cls(method, task.task_id, _interval_ms(result, DEFAULT_POLL_MS))

    def to_json(self) -> str:
        """The handle as a JSON object, to store or send; ``from_json`` reads it back."""
        return json.dumps(
            {
                "method": self.method,
                "taskId": self.task_id,
                "pollIntervalMs": self.poll_interval_ms,
                "answered": list(self.answered),
                "inputRequests": dict(self.input_requests),
            }
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> TaskHandle:
        """The handle ``to_json`` wrote; ``ValueError`` for anything else."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("a task handle is a JSON object")
        method, task_id = data.get("method"), data.get("taskId")
        interval = data.get("pollIntervalMs", DEFAULT_POLL_MS)
        answered = data.get("answered", [])
        requests = data.get("inputRequests", {})
        if method not in TASK_METHODS or not isinstance(task_id, str) or not task_id:
            raise ValueError("a task handle needs a task method and a taskId")
        if not (isinstance(interval, int) and not isinstance(interval, bool) and interval > 0):
            raise ValueError("pollIntervalMs must be a positive integer")
        if not (isinstance(answered, list) and all(isinstance(k, str) for k in answered)):
            raise ValueError("answered must be a list of strings")
        if not isinstance(requests, dict):
            raise ValueError("inputRequests must be an object")
        return cls(method, task_id, interval, tuple(answered), requests)


def _interval_ms(task: Mapping[str, Any], current: int) -> int:
    advised = task.get("pollIntervalMs")
    if isinstance(advised, int) and not isinstance(advised, bool) and advised > 0:
        return max(advised, MIN_POLL_MS)
    return current


def _task_state(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A tasks/get result, checked against the extension's schema (an absent
    resultType is "complete", as for any result)."""
    filled = {"resultType": "complete", **raw}
    try:
        get_task_result.validate_python(filled)
    except (ValidationError, RecursionError):
        status = str(raw.get("status"))[:40]
        raise ProtocolViolation(f"not a valid tasks/get result (status {status!r})") from None
    return filled


async def cancel(call: Call, task_id: str, grace: float) -> None:
    """Ask the server to cancel, waiting at most ``grace`` seconds; what fails is dropped
    (cancellation is cooperative and the caller is already giving up)."""
    with contextlib.suppress(ClientError):
        await call("tasks/cancel", {"taskId": task_id}, time.monotonic() + grace)


async def follow(
    call: Call,
    inputs: InputHandlers,
    bounds: FlowBounds,
    handle: TaskHandle,
    until: float | None,
    *,
    manual: bool = False,
    responses: Mapping[str, Any] | None = None,
) -> dict[str, Any] | TaskHandle:
    """Follow the task to its end: its result (a JSON object), or with ``manual`` a
    handle holding the input requests it waits for. ``responses`` (else the handlers'
    answers to ``handle.input_requests``) are sent first."""
    try:
        return await _follow(call, inputs, bounds, handle, until, manual, responses)
    except DeadlineExceeded:
        await cancel(call, handle.task_id, bounds.limits.close_grace)
        raise
    except (TaskFailed, TaskCancelled):
        raise  # the task has ended: nothing to cancel
    except (Exception, asyncio.CancelledError):
        if not manual:
            await cancel(call, handle.task_id, bounds.limits.close_grace)
        raise


async def _follow(
    call: Call,
    inputs: InputHandlers,
    bounds: FlowBounds,
    handle: TaskHandle,
    until: float | None,
    manual: bool,
    responses: Mapping[str, Any] | None,
) -> dict[str, Any] | TaskHandle:
    task_id = handle.task_id
    answered = set(handle.answered)
    interval_ms = handle.poll_interval_ms
    if responses is None and handle.input_requests:
        cap = bounds.limits.max_input_requests
        responses = await inputs.answer_round(handle.input_requests, cap)
    if responses:
        update = {"taskId": task_id, "inputResponses": dict(responses)}
        await call("tasks/update", update, until)
        answered.update(responses)
    rounds = 0
    while True:
        task = _task_state(await call("tasks/get", {"taskId": task_id}, until))
        status = task["status"]
        if status == "completed":
            return _completed(task["result"])
        if status == "failed":
            raise TaskFailed(task_id, task["error"])
        if status == "cancelled":
            raise TaskCancelled(task_id)
        interval_ms = _interval_ms(task, interval_ms)
        fresh = {
            key: request
            for key, request in (task.get("inputRequests") or {}).items()
            if key not in answered
        }
        if fresh and manual:
            return TaskHandle(handle.method, task_id, interval_ms, tuple(sorted(answered)), fresh)
        if fresh:
            rounds += 1
            if rounds > bounds.max_rounds:
                raise TooManyRounds(f"task {task_id} still needed input after {rounds - 1} rounds")
            answers = await inputs.answer_round(fresh, bounds.limits.max_input_requests)
            await call("tasks/update", {"taskId": task_id, "inputResponses": answers}, until)
            answered.update(fresh)
        pause = interval_ms / 1000
        if until is not None and until - time.monotonic() <= pause:
            raise DeadlineExceeded(
                f"{handle.method} did not complete within {bounds.deadline} s "
                f"(task {task_id} asked to cancel)"
            )
        await asyncio.sleep(pause)


def _completed(result: dict[str, Any]) -> dict[str, Any]:
    """A completed task's result is a complete result of the request's own kind."""
    kind = result.get("resultType", "complete")
    if kind != "complete":
        raise ProtocolViolation(f"a completed task whose result has resultType {kind!r}")
    return {**result, "resultType": "complete"}


class TasksClient(ClientExtension):
    """The tasks extension's client half: ``TasksClient(client)`` declares the extension
    on the client's modern requests (a legacy ``initialize`` does not: the legacy
    revision's tasks are its own) and follows a task a server answers with to the same
    result a plain call returns, or, with ``manual``, hands back its ``TaskHandle``;
    ``client.resume(handle)`` follows it on, here or in another process, and ``cancel``
    cancels one. A client without it declares no tasks: a server runs its task-optional
    tools inline for it, and a task it is sent anyway is a ``ProtocolViolation``."""

    kind = "task"

    def __init__(self, client: Client | None = None) -> None:
        super().__init__(EXTENSION_ID, legacy=False)
        self.results = self
        self._client: Declaring | None = None
        if client is not None:
            client.add_extension(self)

    def install(self, client: Declaring) -> None:
        """Declare the extension at ``client`` and take its tasks from now on."""
        super().install(client)
        self._client = client

    async def follow(
        self, following: Following, method: str, result: dict[str, Any], manual: bool
    ) -> dict[str, Any] | TaskHandle:
        """A task the server answered ``method`` with: its handle with ``manual``, else
        its raw result once it ends."""
        handle = TaskHandle.created(method, result)
        if manual:
            return handle
        return await _follow_with(following, handle, False, None)

    def resumes(self, paused: object) -> bool:
        """Whether ``paused`` is a task's handle, which ``resume`` follows on."""
        return isinstance(paused, TaskHandle)

    async def resume(
        self,
        following: Following,
        paused: Any,
        responses: Mapping[str, Any] | None,
        manual: bool,
    ) -> Any:
        """Follow the task of ``paused`` (a ``TaskHandle``) on: its result as the result
        model of the request that made it, or with ``manual`` a handle again when it
        needs input the client has not given."""
        outcome = await _follow_with(following, paused, manual, responses)
        if isinstance(outcome, TaskHandle):
            return outcome
        return complete_result(RESULT_MODELS[paused.method], outcome)

    async def cancel(self, task: TaskHandle | str) -> None:
        """Ask the server to cancel a task (cooperative: it may still end otherwise)."""
        if self._client is None:
            raise RuntimeError("TasksClient(client) cancels the tasks of the client it is added to")
        task_id = task.task_id if isinstance(task, TaskHandle) else task
        following = self._client.following()
        await following.send("tasks/cancel", {"taskId": task_id}, following.until)


async def _follow_with(
    following: Following,
    handle: TaskHandle,
    manual: bool,
    responses: Mapping[str, Any] | None,
) -> dict[str, Any] | TaskHandle:
    return await follow(
        following.send,
        following.inputs,
        following.bounds,
        handle,
        following.until,
        manual=manual,
        responses=responses,
    )
