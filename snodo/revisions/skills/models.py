"""The skills extension's ``models``."""

from snodo_wire_skills.models import *  # noqa: F403
