"""The tasks extension's ``tables``."""

from snodo_wire_tasks.tables import *  # noqa: F403
