"""The authoring revision's ``tables``."""

from snodo_wire.tables import *  # noqa: F403
