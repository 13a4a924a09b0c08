"""The tasks extension's wire package (``snodo_wire_tasks``)."""

from snodo_wire_tasks import *  # noqa: F403
