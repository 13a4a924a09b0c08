"""The skills extension's ``tables``."""

from snodo_wire_skills.tables import *  # noqa: F403
