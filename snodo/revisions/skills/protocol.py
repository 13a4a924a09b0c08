"""The skills extension's ``protocol``."""

from snodo_wire_skills.protocol import *  # noqa: F403
