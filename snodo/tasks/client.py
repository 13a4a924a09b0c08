"""``TaskClient``: a ``Client`` that declares the tasks extension and follows tasks.

A server that decides to run a ``tools/call`` as a task answers with a
CreateTaskResult; ``TaskClient`` then follows the task (``snodo.tasks.handle.follow``:
polls at the advised interval, answers input requests with the same handlers as MRTR
through ``tasks/update``, cancels at ``deadline=``) and returns the completed result,
so ``call_tool`` returns a ``CallToolResult`` whichever way the server chose. MRTR
rounds before the task is created work as with ``Client``.

``start_tool`` is the manual form: it returns a ``TaskHandle`` (plain data another
process can store and pass to ``follow``) when the server made a task, the result
otherwise. A task in answer to anything but ``tools/call`` is a ``ProtocolViolation``
(ext-tasks/tasks.md: an invalid response).

It is a subclass rather than part of ``Client`` so that the client module, already at
the layout limit, stays as it is; it hooks the one place results arrive (``_send``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from snodo.client import Client
from snodo.client_results import RESULT_MODELS, ProtocolViolation, complete_result
from snodo.tasks.handle import TaskHandle, follow
from snodo_wire import CallToolResult
from snodo_wire_tasks.protocol import EXTENSION_ID

__all__ = ["TaskClient"]


class TaskClient(Client):
    def capabilities(self) -> dict[str, Any]:
        declared = super().capabilities()
        extensions = {**declared.get("extensions", {}), EXTENSION_ID: {}}
        return {**declared, "extensions": extensions}

    async def _send(
        self,
        method: str,
        params: dict[str, Any],
        modern_only: bool = False,
        until: float | None = None,
    ) -> dict[str, Any]:
        result = await super()._send(method, params, modern_only, until)
        if result.get("resultType") != "task":
            return result
        handle = _handle(method, result)
        return {**await self._follow(handle), "resultType": "complete"}

    async def _follow(self, handle: TaskHandle) -> dict[str, Any]:
        return await follow(handle, self.request, self.inputs.answer, deadline=self.deadline)

    async def follow(self, handle: TaskHandle) -> Any:
        """Follow a task (started here or elsewhere) to its typed result; a failed task
        raises ``TaskFailed`` (a ``RequestError``), a cancelled one ``TaskCancelled``."""
        result = {**await self._follow(handle), "resultType": "complete"}
        return complete_result(RESULT_MODELS[handle.method], result)

    async def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> TaskHandle | CallToolResult:
        """Call a tool once: a ``TaskHandle`` if the server made a task, else its result."""
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        result = await Client._send(self, "tools/call", params, True, self._until())
        if result.get("resultType") == "task":
            return _handle("tools/call", result)
        model: CallToolResult = complete_result(CallToolResult, result)
        return model

    async def cancel(self, handle: TaskHandle) -> None:
        """Ask the server to cancel (cooperative: the task may still end otherwise)."""
        await self.request("tasks/cancel", {"taskId": handle.task_id})


def _handle(method: str, result: Mapping[str, Any]) -> TaskHandle:
    if method != "tools/call":
        raise ProtocolViolation(f"a task in answer to {method}, which cannot have one")
    return TaskHandle.created(method, result)
