"""The Skills extension's wire package (``snodo_wire_skills``)."""

from snodo_wire_skills import *  # noqa: F403
