"""The tasks extension's ``adapters``."""

from snodo_wire_tasks.adapters import *  # noqa: F403
