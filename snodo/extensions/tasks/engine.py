"""The task engine: creates tasks, runs their work, and answers tasks/get, update, cancel.

Theory of operation
-------------------
A tool registered with ``task="optional"`` or ``task="required"`` may return
``background(work)`` instead of a result. When the request's client declared the
extension, ``Tasks.begin`` stores a new record (durably, before answering), starts
``work`` in this process and answers with the CreateTaskResult. When it did not, an
optional tool's work runs inline and its result is the call's result (a required
tool never gets that far: -32021 before its handler runs).

``work(ctx)`` is called like a tool handler, once per round. It may return
``input_required(...)``: the task moves to ``input_required`` with those requests
(after the same admission as an MRTR result, against the creating request's client
capabilities), the client answers through tasks/update on any worker, and once every
outstanding key is answered the work is called again with all the task's answers so
far in ``ctx.input_responses`` and what it sealed in ``ctx.state_data``. State sealed
inside a task stays in the store and never reaches the client, so it is kept as JSON,
not signed. Keys must be new in every round: a key is never reused within a task
(ext-tasks/tasks.md, "Task Update Requests").

While the work runs, a watcher in the owning process renews the record's lease every
``lease / 3`` seconds and looks for a cancellation recorded by any worker; it cancels
the work's asyncio task, so the work stops at its next ``await`` (cooperative, as the
extension says). A worker that reads a non-terminal task whose lease has lapsed marks
it ``failed`` (-32603, "worker lost"): a task whose process died does not stay
``working`` forever.

Every status change goes through ``_announce``, which calls ``on_status``, tells the
server's observer (with the status it left: ``observe``) and this process's
listen streams (``notifications/tasks``). The owner runs the work inside the
observer's ``task_run``; a tasks/update or tasks/cancel request leaves the observer's
mark in the record, so the owner's run links to it whichever worker answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from snodo.core.admission import admit
from snodo.core.context import Context
from snodo.core.errors import InternalError, InvalidParams, McpError, MissingClientCapability
from snodo.core.input_responses import pin
from snodo.core.observe import Observer
from snodo.core.result import NO_STATE, InputRequired, ToolError
from snodo.extensions.tasks.methods import TASK_METHODS
from snodo.extensions.tasks.observe import QUIET_TASKS, TaskObserver, task_observer
from snodo.extensions.tasks.record import Change, Status, TaskRecord, advance
from snodo.extensions.tasks.redis import RedisTaskStore
from snodo.extensions.tasks.store import MemoryTaskStore, StoreFull, TaskStore
from snodo.revisions.authoring import adapters
from snodo.revisions.tasks.protocol import EXTENSION_ID
from snodo.server.extensions import Answered, Extension, ExtensionMethod, Handoff, Host
from snodo.server.subscriptions import MAX_RESOURCE_SUBSCRIPTIONS
from snodo.server.tools import failure

__all__ = ["Background", "StatusHook", "Tasks", "background", "declares_tasks"]

log = logging.getLogger("snodo")

Work = Callable[[Context], Awaitable[Any]]
Finish = Callable[[Any], dict[str, Any]]
"""The server's turn of what the work returned into the tool's CallToolResult (checked
against its output schema); the engine runs tools without knowing how they are kept."""
StatusHook = Callable[[TaskRecord], object]
"""Told every record right after its status changed (creation included)."""

WORKER_LOST: dict[str, Any] = {"code": -32603, "message": "The worker running this task stopped"}


@dataclass(frozen=True, slots=True)
class Background(Handoff):
    """What a task tool returns to run ``work`` as a task: a ``Handoff`` the extension
    takes (``calls.after``); a server that offers no tasks refuses it."""

    work: Work
    status_message: str | None = None


def background(work: Work, status_message: str | None = None) -> Background:
    """Run ``work(ctx)`` as a task when the client declared the extension, inline otherwise."""
    if not callable(work):
        raise TypeError("background needs an async callable work(ctx)")
    return Background(work, status_message)


def declares_tasks(ctx: Context) -> bool:
    """Whether the request's client declared the tasks extension (``EXTENSION_ID``) in
    the ``extensions`` of its capabilities."""
    extensions = ctx.client_capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION_ID), Mapping)


def required_extension() -> MissingClientCapability:
    return MissingClientCapability({"extensions": {EXTENSION_ID: {}}})


def _drop(_: dict[str, Any]) -> None:
    """Tasks carry no progress or log notifications (ext-tasks/tasks.md)."""


class Tasks(Extension):
    """The tasks extension, offered with ``Server(extensions=[Tasks(store)])``: tasks over
    one store; give every worker of a server the same store (none: this process's
    memory, or Redis's with the server's ``redis=``). ``tasks/get``, ``tasks/update``
    and ``tasks/cancel`` are answered here, for modern requests only; a tool registered
    with ``task=`` runs as a task for a client that declared the extension."""

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        ttl_ms: int | None = 3_600_000,
        poll_interval_ms: int = 500,
        lease: float = 30.0,
        watch_interval: float = 0.1,
        clock: Callable[[], float] = time.time,
        on_status: StatusHook | None = None,
    ) -> None:
        if ttl_ms is not None and ttl_ms <= 0:
            raise ValueError("ttl_ms must be positive, or None for no TTL")
        if poll_interval_ms <= 0 or lease <= 0 or watch_interval <= 0:
            raise ValueError("poll_interval_ms, lease and watch_interval must be positive")
        super().__init__(EXTENSION_ID, legacy=False)
        self.store: TaskStore = store if store is not None else MemoryTaskStore(clock)
        self.store_given = store is not None
        """Given no store, a server with ``redis=`` (``SNODO_REDIS``) gives it Redis's."""
        self.mask_errors = False
        """Set by ``Server(mask_errors=True)``: work's untyped exception reaches the
        client as a generic message."""
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.lease = lease
        self.watch_interval = watch_interval
        self.clock = clock
        self.on_status = on_status
        self.observer: TaskObserver = QUIET_TASKS
        """What reports each task to the server's observer (``observe`` sets it)."""
        self.worker = secrets.token_hex(8)
        self.listeners: list[StatusHook] = []
        """This process's listen streams, told of every change it makes or sees."""
        self._running: dict[str, asyncio.Task[None]] = {}
        self._closing: set[asyncio.Future[Any]] = set()
        handlers = {"tasks/get": self.get, "tasks/update": self.update, "tasks/cancel": self.cancel}
        for method, spec in TASK_METHODS.items():
            self.methods[method] = ExtensionMethod(
                method,
                None,
                handlers[method],
                params=spec.params,
                input_required=spec.input_required,
            )
        self.calls = _TaskCalls(self)
        self.listening = _TaskIds()

    # -- the extension at a server ---------------------------------------------------------

    def install(self, server: Host) -> None:
        """Offer the extension at ``server``: its tasks kept in the server's Redis when it
        was given no store, its errors masked as the server's tools' are, every status
        change told to the server's listen streams."""
        super().install(server)
        if server.redis is not None and not self.store_given:
            self.store = RedisTaskStore(server.redis)
        offering = server.offering
        if offering.mask_errors:
            self.mask_errors = True
        self.listeners.append(offering.subscriptions.task_changed)

    def observe(self, observer: Observer) -> None:
        """Report each task to the server's observer (``task_observer``)."""
        self.observer = task_observer(observer)

    def dependencies(self) -> dict[str, str]:
        """The task store's Redis, when it keeps its tasks there."""
        store = self.store
        return {"task store": store.url} if isinstance(store, RedisTaskStore) else {}

    # -- status changes ------------------------------------------------------------------

    def _announce(self, record: TaskRecord, previous: str | None) -> None:
        if self.observer is not QUIET_TASKS:
            self.observer.task_changed(record, previous)
        if self.on_status is not None:
            self.on_status(record)
        for listener in list(self.listeners):
            listener(record)

    async def _transition(self, task_id: str, status: Any, **changes: Any) -> TaskRecord | None:
        """Move a task to ``status`` unless it is terminal already (then nothing happens)."""
        before: list[str] = []

        def change(record: TaskRecord) -> TaskRecord | None:
            before.clear()  # a store may run this again after another writer won
            if record.terminal:
                return None
            before.append(record.status)
            return advance(record, status, self.clock(), **changes)

        return await self._write(task_id, change, before)

    async def _write(self, task_id: str, change: Change, before: list[str]) -> TaskRecord | None:
        """Write ``change`` and say what it wrote (``before`` holds the status it left, or
        nothing when it changed nothing). A cancel while the store writes stops neither
        the write (shielded) nor its telling: what it wrote is said before the run stops,
        so no status it reached goes untold."""
        writing = asyncio.ensure_future(self.store.update(task_id, change))
        try:
            record = await asyncio.shield(writing)
        except asyncio.CancelledError:
            self._tell(await asyncio.shield(writing), before)
            raise
        self._tell(record, before)
        return record

    def _tell(self, record: TaskRecord | None, before: list[str]) -> None:
        if record is not None and before:
            self._announce(record, before[-1])

    # -- creation and the work -----------------------------------------------------------

    async def begin(
        self, ctx: Context, tool: str, finish: Finish, chosen: Background
    ) -> dict[str, Any]:
        """Create the task, start its work here, and return the CreateTaskResult."""
        now = self.clock()
        record = TaskRecord(
            task_id=secrets.token_urlsafe(24),  # unguessable: it names the task to anyone
            status="working",
            created_at=now,
            updated_at=now,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            principal=ctx.principal,
            owner=self.worker,
            lease_until=now + self.lease,
            status_message=chosen.status_message,
        )
        try:
            await self.store.create(record)
        except StoreFull:
            raise InternalError("Too many unfinished tasks; try again later") from None
        self._announce(record, None)
        base = replace(ctx, emit=_drop, request_state=None, input_responses=MappingProxyType({}))
        runner = asyncio.create_task(self._drive(record.task_id, base, tool, finish, chosen.work))
        self._running[record.task_id] = runner
        runner.add_done_callback(self._finished)
        return {"resultType": "task", **record.task()}

    def _finished(self, runner: asyncio.Task[None]) -> None:
        """Forget a finished run; one cancelled before it began still ends ``cancelled``."""
        task_id = next((k for k, v in self._running.items() if v is runner), None)
        if task_id is None:
            return
        del self._running[task_id]
        if runner.cancelled():
            closing = asyncio.ensure_future(
                self._transition(task_id, "cancelled", input_requests={})
            )
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)

    async def _drive(
        self, task_id: str, base: Context, tool: str, finish: Finish, work: Work
    ) -> None:
        watcher = asyncio.create_task(self._watch(task_id, asyncio.current_task()))
        with self.observer.task_run(task_id, tool):
            try:
                await self._rounds(task_id, base, finish, work)
            except asyncio.CancelledError:
                await self._transition(task_id, "cancelled", input_requests={})
            except McpError as exc:
                await self._transition(task_id, "failed", error=exc.to_error(), input_requests={})
            except Exception:
                log.exception("task %s failed", task_id)
                await self._transition(
                    task_id, "failed", error={"code": -32603, "message": "Internal error"}
                )
            finally:
                watcher.cancel()

    async def _rounds(self, task_id: str, base: Context, finish: Finish, work: Work) -> None:
        answers: dict[str, Any] = {}
        # what the work asked so far (snodo.core.input_responses.pin)
        questions: dict[str, str] = {}
        state: str | None = None
        while True:
            ctx = replace(
                base,
                input_responses=MappingProxyType(dict(answers)),
                state_data=json.loads(state) if state is not None else None,
                asked=MappingProxyType(dict(questions)),
                sealer=_keep,
            )
            try:
                value = await work(ctx)
            except McpError:
                raise
            except asyncio.CancelledError:
                raise
            except ToolError as raised:  # raised on purpose: the answer itself
                value = raised
            except Exception as exc:
                log.warning("task %s: work failed", task_id, exc_info=True)
                if self.mask_errors:
                    value = ToolError(f"Task {task_id} failed; the server's log has the details")
                else:
                    value = ToolError(str(exc) or type(exc).__name__)
            if not isinstance(value, InputRequired):
                result = finish(value)
                await self._transition(task_id, "completed", result=result)
                return
            asked = admit("tools/call", value, base.client_capabilities)
            requests = asked.get("inputRequests", {})
            # state= is kept as ctx.seal keeps it in a task: as JSON, in the store.
            state = asked.get("requestState") if value.state is NO_STATE else _keep(value.state)
            questions = pin(questions, requests)
            record = await self._ask(task_id, requests, state)
            if record is None or record.terminal:
                return
            taken, resumed = await self._answers(task_id)
            answers.update(taken)
            if self.observer is not QUIET_TASKS:
                self.observer.task_resumed(resumed)

    async def _ask(
        self, task_id: str, requests: dict[str, Any], state: str | None
    ) -> TaskRecord | None:
        reused: list[str] = []
        before: list[str] = []

        def change(record: TaskRecord) -> TaskRecord | None:
            before.clear()  # a store may run this again after another writer won
            reused.clear()
            if record.terminal:
                return None
            reused.extend(k for k in requests if k in record.issued)
            if reused:
                return None
            before.append(record.status)
            status: Status = "input_required" if requests else "working"
            return advance(
                record,
                status,
                self.clock(),
                input_requests=dict(requests),
                issued=record.issued + tuple(sorted(requests)),
                state=state,
            )

        record = await self._write(task_id, change, before)
        if reused:
            log.error("task %s asked again under keys already used: %s", task_id, reused)
            raise InternalError()
        return record

    async def _answers(self, task_id: str) -> tuple[dict[str, Any], TaskRecord]:
        """Wait until no request is outstanding; take the answers delivered so far."""
        taken: dict[str, Any] = {}

        def take(record: TaskRecord) -> TaskRecord | None:
            if record.input_requests or record.terminal:
                return None
            taken.update(record.answers)
            return replace(record, answers={})

        while True:
            record = await self.store.update(task_id, take)
            if record is None or record.terminal:
                raise asyncio.CancelledError()
            if not record.input_requests:
                return taken, record
            await asyncio.sleep(self.watch_interval)

    async def _watch(self, task_id: str, runner: asyncio.Task[Any] | None) -> None:
        """Renew the lease while the work runs, and stop it when a cancel is recorded."""
        renewed = self.clock()
        while True:
            await asyncio.sleep(self.watch_interval)
            now = self.clock()
            if now - renewed >= self.lease / 3:
                record = await self.store.update(
                    task_id, lambda r: replace(r, lease_until=self.clock() + self.lease)
                )
                renewed = now
            else:
                record = await self.store.get(task_id)
            if record is None or record.cancel_requested:
                _stop_once(runner)
                return

    # -- tasks/get, tasks/update, tasks/cancel --------------------------------------------

    async def _find(self, ctx: Context, task_id: Any) -> TaskRecord:
        if not declares_tasks(ctx):
            raise required_extension()
        if not isinstance(task_id, str):
            raise InvalidParams("Invalid params: taskId: must be a string")
        record = await self.store.get(task_id)
        # Another principal's task is reported as missing, never as forbidden.
        if record is None or record.principal != ctx.principal:
            raise InvalidParams("Failed to retrieve task: Task not found")
        if not record.terminal and record.lease_until < self.clock():
            lost = await self._transition(task_id, "failed", error=WORKER_LOST, input_requests={})
            record = lost or record
        return record

    async def get(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        """tasks/get: the caller's task ``taskId`` as a DetailedTask (-32602 if not found)."""
        record = await self._find(ctx, params.get("taskId"))
        return record.detailed()

    async def update(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        """tasks/update: deliver ``inputResponses`` for the task's outstanding requests to
        its owner (answers to other keys are ignored); the result is empty."""
        record = await self._find(ctx, params.get("taskId"))
        responses = params.get("inputResponses")
        if not isinstance(responses, Mapping):
            raise InvalidParams("Invalid params: inputResponses: must be an object")
        # Answers to keys that are not outstanding are ignored (ext-tasks/tasks.md); the
        # outstanding ones must be valid InputResponses.
        wanted = {k: v for k, v in responses.items() if k in record.input_requests}
        for key, answer in wanted.items():
            try:
                adapters.input_response.validate_python(answer)
            except ValidationError as exc:
                raise InvalidParams(f"Invalid params: inputResponses.{key}") from exc
        if not wanted:
            return {}
        mark = self.observer.task_mark() if self.observer is not QUIET_TASKS else None
        before: list[str] = []

        def deliver(current: TaskRecord) -> TaskRecord | None:
            before.clear()  # a store may run this again after another writer won
            fresh = {k: v for k, v in wanted.items() if k in current.input_requests}
            if current.terminal or not fresh:
                return None
            before.append(current.status)
            left = {k: v for k, v in current.input_requests.items() if k not in fresh}
            status: Status = "input_required" if left else "working"
            changed = advance(
                current,
                status,
                self.clock(),
                input_requests=left,
                answers={**current.answers, **fresh},
            )
            return changed if mark is None else _linked(changed, mark)

        changed = await self.store.update(record.task_id, deliver)
        if changed is not None and before and changed.status != before[-1]:
            self._announce(changed, before[-1])
        return {}

    async def cancel(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        """Record the cancellation; the owner stops the work. A terminal task: same ack."""
        record = await self._find(ctx, params.get("taskId"))
        if record.terminal:
            return {}
        mark = self.observer.task_mark() if self.observer is not QUIET_TASKS else None

        def request_cancel(current: TaskRecord) -> TaskRecord | None:
            if current.terminal or current.cancel_requested:
                return None
            changed = replace(current, cancel_requested=True)
            return changed if mark is None else _linked(changed, mark)

        await self.store.update(record.task_id, request_cancel)
        _stop_once(self._running.get(record.task_id))
        return {}


def _stop_once(runner: asyncio.Task[Any] | None) -> None:
    """Cancel a run once. The cancel handler and the watcher may both stop it; a second
    cancel would land while the run writes its ``cancelled`` end, and cut that short."""
    if runner is not None and not runner.cancelling():
        runner.cancel()


class _TaskCalls:
    """The tasks extension around a tool call: a required task needs a client that
    declared the extension; background work becomes a task, or runs inline for a
    client that did not declare it."""

    def __init__(self, engine: Tasks) -> None:
        self.engine = engine

    def before(self, tool: Any, ctx: Context) -> None:
        if tool.task == "required" and not declares_tasks(ctx):
            raise required_extension()  # ext-tasks/tasks.md: no task, no answer

    async def after(self, tool: Any, ctx: Context, value: Any, finish: Finish) -> Any:
        if not isinstance(value, Background):
            return value
        if tool.task is None:
            log.error(
                "tool %s returned background work but was not registered with task=", tool.name
            )
            raise InternalError()
        if declares_tasks(ctx):
            return Answered(await self.engine.begin(ctx, tool.name, finish, value))
        try:
            return await value.work(ctx)  # inline: the work's value is the tool's
        except McpError:
            raise
        except ToolError as raised:
            return raised
        except Exception as exc:
            return failure(tool, exc, self.engine.mask_errors)


class _TaskIds:
    """``taskIds`` of ``subscriptions/listen``: the tasks whose status the stream hears."""

    key = "taskIds"

    def honour(self, ctx: Context, value: Any) -> Any:
        if not value:
            return None
        if not declares_tasks(ctx):
            raise required_extension()  # ext-tasks/tasks.md, "Task Status Notifications"
        if not isinstance(value, list) or len(value) > MAX_RESOURCE_SUBSCRIPTIONS:
            raise InvalidParams(f"notifications.taskIds: at most {MAX_RESOURCE_SUBSCRIPTIONS} ids")
        if not all(isinstance(task_id, str) and len(task_id) <= 256 for task_id in value):
            raise InvalidParams("notifications.taskIds: each must be a task id string")
        return list(value)


def _linked(record: TaskRecord, mark: str) -> TaskRecord:
    return replace(record, trace_links=(*record.trace_links, mark))


def _keep(data: Any) -> str:
    """``ctx.seal`` inside a task: the state stays in the store, as JSON."""
    return json.dumps(data, separators=(",", ":"))
