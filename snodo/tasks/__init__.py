"""The Tasks extension: durable tasks that any worker can answer for.

``Server(tasks=Tasks(store))`` offers it; a tool registered with ``task="optional"``
or ``task="required"`` returns ``background(work)`` to run ``work`` as a task. Stores:
``MemoryTaskStore``, ``SQLiteTaskStore`` (``snodo.tasks.sqlite``), ``RedisTaskStore``
(``snodo.tasks.redis``), or ``task_store(url)``.

The package may import the core and ``snodo.core.state`` (for its stores' Redis and
SQLite helpers); ``snodo.server`` drives it, handing the engine a tool's name and how
to finish its result, never the tool itself.
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
