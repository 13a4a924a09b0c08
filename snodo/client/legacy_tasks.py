"""A legacy server's task-required tools, called through the task augmentation of the
latest legacy revision (its basic/utilities/tasks.mdx).

A tool whose listing says ``execution.taskSupport: "required"`` refuses a plain call
(-32601). Such a call carries ``params.task``; the server answers with a
``CreateTaskResult`` (``{"task": {...}}``), the client polls ``tasks/get`` at the
task's ``pollInterval`` until it is terminal or waits for input, then asks
``tasks/result``, which returns what the call itself would have (and, while the task
waits for input, carries the server's questions to the client's handlers on the
session). The modern era has its own task extension (``snodo.extensions.tasks``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from snodo.client.errors import DeadlineExceeded, ProtocolViolation

__all__ = ["call_as_task", "requires_task", "task_tools", "tools_take_tasks"]

Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

MAX_PAGES = 100
"""Pages of ``tools/list`` read to find the task-required tools, at most."""
TERMINAL = frozenset({"completed", "failed", "cancelled"})
POLL_BOUNDS = (0.05, 5.0)
"""Seconds between polls: the server's ``pollInterval``, kept within these."""


def requires_task(raw_tool: Mapping[str, Any]) -> bool:
    """Whether a listed tool (raw JSON) must be called as a task."""
    execution = raw_tool.get("execution")
    return isinstance(execution, Mapping) and execution.get("taskSupport") == "required"


def tools_take_tasks(server_capabilities: Any) -> bool:
    """Whether a legacy server's ``initialize`` answer offers task-augmented tools/call."""
    tasks = server_capabilities.get("tasks") if isinstance(server_capabilities, dict) else None
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and "call" in tools


async def task_tools(send: Send) -> frozenset[str]:
    """The names of the tools the server lists as task-required (its tools listed once
    for it, when a call comes before any listing)."""
    names: set[str] = set()
    cursor: Any = None
    for _ in range(MAX_PAGES):
        page = await send("tools/list", {} if cursor is None else {"cursor": cursor})
        tools = page.get("tools")
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, Mapping) and requires_task(tool):
                names.add(str(tool.get("name")))
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str):
            break
    return frozenset(names)


def _task(result: Mapping[str, Any], where: str) -> dict[str, Any]:
    task = result.get("task", result)  # CreateTaskResult wraps it; tasks/get is the task
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        raise ProtocolViolation(f"{where}: not a task: {dict(result)!r:.200}")
    return task


async def call_as_task(
    send: Send, params: Mapping[str, Any], until: float | None
) -> dict[str, Any]:
    """``tools/call`` with ``params`` as a task: created, polled, its result fetched."""
    task = _task(await send("tools/call", {**params, "task": {}}), "tools/call with task")
    task_id = task["taskId"]
    while task.get("status") not in TERMINAL and task.get("status") != "input_required":
        interval = task.get("pollInterval")
        seconds = interval / 1000 if isinstance(interval, int | float) else POLL_BOUNDS[0]
        seconds = min(max(seconds, POLL_BOUNDS[0]), POLL_BOUNDS[1])
        if until is not None and time.monotonic() + seconds >= until:
            raise DeadlineExceeded(f"task {task_id} did not finish within the call's deadline")
        await asyncio.sleep(seconds)
        task = _task(await send("tasks/get", {"taskId": task_id}), "tasks/get")
    return await send("tasks/result", {"taskId": task_id})
