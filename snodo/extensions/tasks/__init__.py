"""The Tasks extension (``EXTENSION_ID``): durable tasks that any worker can answer for.

Its server half: ``Server(extensions=[Tasks(store)])`` offers it (``engine``: creates
tasks, runs their work, answers ``tasks/get``, ``tasks/update`` and ``tasks/cancel``,
whose method table is ``methods``); a tool registered with ``task="optional"`` or
``task="required"`` returns ``background(work)`` to run ``work`` as a task. ``record``:
a task and its status machine. Stores: ``MemoryTaskStore`` (``store``),
``SQLiteTaskStore`` (``sqlite``), ``RedisTaskStore`` (``redis``), or ``task_store(url)``.
Its client half (``client``): ``TasksClient(client)`` declares the extension and follows
a task to its result, or hands back its ``TaskHandle`` (plain data, resumed anywhere);
``TaskFailed`` and ``TaskCancelled`` are how a followed task ends otherwise. Its
observability half: ``observe``, what the engine reports each task to, found from
the server's observer (``task_observer``); ``otel``, task runs as spans and task metrics
for ``snodo.otel``'s observer (the ``snodo[otel]`` extra).

The package is reached through the public extension API of the server alone: the server
hands the engine a tool's name and how to finish its result, never the tool itself, and
names nothing of the extension.
"""

from snodo.extensions.tasks.client import TaskCancelled, TaskFailed, TaskHandle, TasksClient
from snodo.extensions.tasks.engine import Background, StatusHook, Tasks, background, declares_tasks
from snodo.extensions.tasks.record import TERMINAL, TRANSITIONS, TaskRecord
from snodo.extensions.tasks.store import MemoryTaskStore, StoreFull, TaskStore, task_store
from snodo.revisions.tasks.protocol import EXTENSION_ID

__all__ = [
    "EXTENSION_ID",
    "TERMINAL",
    "TRANSITIONS",
    "Background",
    "MemoryTaskStore",
    "StatusHook",
    "StoreFull",
    "TaskCancelled",
    "TaskFailed",
    "TaskHandle",
    "TaskRecord",
    "TaskStore",
    "Tasks",
    "TasksClient",
    "background",
    "declares_tasks",
    "task_store",
]
