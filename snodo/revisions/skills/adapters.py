"""The skills extension's ``adapters``."""

from snodo_wire_skills.adapters import *  # noqa: F403
