"""Tasks and their notifications shared by every worker, from configuration:

    SNODO_TASKS=redis://redis.internal:6379/0 \\
        snodo run tasks_workers.py:server --transport http --workers 4

Unset, both stay in this process (`memory:`), which suits one worker:
python tasks_workers.py prints what was chosen.
"""

import os

from snodo import Server
from snodo.extensions.tasks import Tasks, task_store
from snodo.server import LegacyLimits, notification_bus

TASKS = os.environ.get("SNODO_TASKS", "memory:")  # or sqlite:///PATH for one host
# The bus carries notifications between workers; the task store's Redis can carry it.
NOTIFY = os.environ.get("SNODO_NOTIFY", TASKS if TASKS.startswith("redis") else "memory:")

server = Server(
    "builds",
    "1.0.0",
    extensions=[Tasks(task_store(TASKS))],
    notifications=notification_bus(NOTIFY),
    # Legacy (initialize) sessions too: kept in one worker, `--workers` refuses them.
    legacy=LegacyLimits(store=TASKS if TASKS.startswith("redis") else None),
)

if __name__ == "__main__":
    print(f"tasks in {TASKS}, notifications through {NOTIFY}")
