"""The authoring revision's ``adapters``."""

from snodo_wire.adapters import *  # noqa: F403
