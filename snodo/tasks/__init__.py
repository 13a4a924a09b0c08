"""The Tasks extension: durable tasks that any worker can answer for.

``Server(extensions=[Tasks(store)])`` offers it; a tool registered with ``task="optional"``
or ``task="required"`` returns ``background(work)`` to run ``work`` as a task. Stores:
``MemoryTaskStore``, ``SQLiteTaskStore`` (``snodo.tasks.sqlite``), ``RedisTaskStore``
(``snodo.tasks.redis``), or ``task_store(url)``.

The package may import the core, ``snodo.stores`` (its stores' Redis and SQLite
helpers) and ``snodo.server``, whose public extension API it is offered through: the
server hands the engine a tool's name and how to finish its result, never the tool
itself, and names nothing of the extension.
"""

from snodo.tasks.engine import Background, StatusHook, Tasks, background, declares_tasks
from snodo.tasks.record import TERMINAL, TRANSITIONS, TaskRecord
from snodo.tasks.store import MemoryTaskStore, StoreFull, TaskStore, task_store

__all__ = [
    "TERMINAL",
    "TRANSITIONS",
    "Background",
    "MemoryTaskStore",
    "StatusHook",
    "StoreFull",
    "TaskRecord",
    "TaskStore",
    "Tasks",
    "background",
    "declares_tasks",
    "task_store",
]
