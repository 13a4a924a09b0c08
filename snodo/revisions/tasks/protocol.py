"""The tasks extension's ``protocol``."""

from snodo_wire_tasks.protocol import *  # noqa: F403
