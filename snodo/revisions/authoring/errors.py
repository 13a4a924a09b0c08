"""The authoring revision's ``errors``."""

from snodo_wire.errors import *  # noqa: F403
