"""The tasks extension's ``models``."""

from snodo_wire_tasks.models import *  # noqa: F403
