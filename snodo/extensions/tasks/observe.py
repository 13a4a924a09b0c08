"""What the engine reports of each task, and to whom: the extension's observability half.

The engine reports every task to a ``TaskObserver``: ``task_changed`` on every status
change this worker makes (creation included), ``task_run`` around the owner's run of
its work, ``task_resumed`` when the owner takes an input round's answers, and
``task_mark`` for where a tasks/update or tasks/cancel request is traced, kept in the
task's record so the owner, maybe another process, can link its run to it.

The server tells the extension its observer (``Extension.observe``), which knows
requests, not tasks: ``task_observer`` finds what reports the tasks to it. An observer
that implements the four methods itself is used as it is; ``snodo.otel``'s
``OtelObserver`` gets the task spans and metrics of ``snodo.extensions.tasks.otel``
(loaded only then: the ``snodo[otel]`` extra); any other observes no task.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Final, Protocol, runtime_checkable

from snodo.core.observe import QUIET, Observer
from snodo.extensions.tasks.record import TaskView

__all__ = ["QUIET_TASKS", "QuietTasks", "TaskObserver", "task_observer"]


@runtime_checkable
class TaskObserver(Protocol):
    """Where the engine reports each task; ``QUIET_TASKS`` when nobody listens."""

    def task_changed(self, record: TaskView, previous: str | None) -> None:
        """This worker created a task (``previous`` None) or changed its status."""

    def task_run(self, task_id: str, tool: str) -> AbstractContextManager[None]:
        """The owner runs the task's work inside this, from creation to its end."""

    def task_resumed(self, record: TaskView) -> None:
        """The owner took an input round's answers and calls the work again."""

    def task_mark(self) -> str | None:
        """Where the current request is traced, for the task's run to link to (or None)."""


_NOTHING: Final[nullcontext[None]] = nullcontext()


class QuietTasks:
    """The task observer that observes nothing."""

    __slots__ = ()

    def task_changed(self, record: TaskView, previous: str | None) -> None:
        pass

    def task_run(self, task_id: str, tool: str) -> AbstractContextManager[None]:
        return _NOTHING

    def task_resumed(self, record: TaskView) -> None:
        pass

    def task_mark(self) -> str | None:
        return None


QUIET_TASKS: Final = QuietTasks()


def task_observer(observer: Observer) -> TaskObserver:
    """What reports the tasks to the server's ``observer``."""
    if observer is QUIET:
        return QUIET_TASKS
    if isinstance(observer, TaskObserver):
        return observer
    try:
        from snodo.otel import OtelObserver  # noqa: PLC0415 - the otel extra
    except ModuleNotFoundError:
        return QUIET_TASKS
    if isinstance(observer, OtelObserver):
        from snodo.extensions.tasks.otel import TaskRuns  # noqa: PLC0415 - the otel extra

        return TaskRuns(observer)
    return QUIET_TASKS
