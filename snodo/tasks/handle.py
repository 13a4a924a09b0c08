"""The client's side of a task: a handle that can be stored, and the loop that follows it.

``follow`` polls ``tasks/get`` at the interval the server advises, answers each new
input request once (keys are unique over a task's life, so a key already answered is
never shown to the user again) through ``tasks/update``, and ends with the task: the
result when it completed, ``TaskFailed`` with the JSON-RPC error when it failed,
``TaskCancelled`` when it was cancelled. With a ``deadline`` it sends ``tasks/cancel``
and raises ``TaskTimeout`` when the next poll would come too late.

A ``TaskHandle`` is plain data (``to_json``/``from_json``): a process can store it and
another one can follow the task to its end.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from snodo.client_errors import ClientError, RequestError, RequestTimeout
from snodo.errors import ErrorCode

__all__ = ["TaskCancelled", "TaskFailed", "TaskHandle", "TaskTimeout", "follow"]

Request = Callable[[str, Mapping[str, Any]], Awaitable[dict[str, Any]]]
Answer = Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]

DEFAULT_POLL_MS = 1000
"""When the server advises no interval."""


class TaskFailed(RequestError):
    """The task ended ``failed``: a ``RequestError`` with the JSON-RPC error it failed with,
    so a caller catches the same type whether the call failed at once or as a task."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        code = error.get("code")
        super().__init__(
            code if isinstance(code, int) else ErrorCode.INTERNAL_ERROR,
            str(error.get("message", "task failed")),
            error.get("data"),
        )


class TaskCancelled(ClientError):
    """The task ended ``cancelled``."""


class TaskTimeout(RequestTimeout, TimeoutError):
    """The deadline passed before the task ended; it was asked to cancel."""


@dataclass(frozen=True, slots=True)
class TaskHandle:
    method: str
    """The request that created the task (its result model is that method's)."""
    task_id: str
    poll_interval_ms: int = DEFAULT_POLL_MS
    answered: tuple[str, ...] = ()
    """Input request keys already answered."""

    @classmethod
    def created(cls, method: str, result: Mapping[str, Any]) -> TaskHandle:
        task_id = result.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise ValueError("a CreateTaskResult without a taskId")
        interval = result.get("pollIntervalMs")
        return cls(
            method,
            task_id,
            interval if isinstance(interval, int) and interval > 0 else DEFAULT_POLL_MS,
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "method": self.method,
                "taskId": self.task_id,
                "pollIntervalMs": self.poll_interval_ms,
                "answered": list(self.answered),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> TaskHandle:
        data = json.loads(text)
        return cls(
            str(data["method"]),
            str(data["taskId"]),
            int(data.get("pollIntervalMs", DEFAULT_POLL_MS)),
            tuple(str(k) for k in data.get("answered", ())),
        )


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


async def follow(
    handle: TaskHandle,
    request: Request,
    answer: Answer,
    *,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Follow the task to its end and return its result (a JSON object)."""
    started = clock()
    answered = set(handle.answered)
    interval = handle.poll_interval_ms / 1000
    while True:
        task = await request("tasks/get", {"taskId": handle.task_id})
        status = task.get("status")
        if status == "completed":
            result = task.get("result")
            if not isinstance(result, dict):
                raise ValueError("a completed task without a result object")
            return result
        if status == "failed":
            error = task.get("error")
            raise TaskFailed(error if isinstance(error, dict) else {"message": "task failed"})
        if status == "cancelled":
            raise TaskCancelled(handle.task_id)
        if _positive(task.get("pollIntervalMs")):
            interval = task["pollIntervalMs"] / 1000
        if status == "input_required":
            requests = task.get("inputRequests") or {}
            fresh = {k: v for k, v in requests.items() if k not in answered}
            if fresh:
                answers = {key: await answer(req) for key, req in fresh.items()}
                await request("tasks/update", {"taskId": handle.task_id, "inputResponses": answers})
                answered.update(fresh)
        if deadline is not None and clock() - started + interval > deadline:
            await request("tasks/cancel", {"taskId": handle.task_id})
            raise TaskTimeout(f"task {handle.task_id} did not end within {deadline} s")
        await asyncio.sleep(interval)
