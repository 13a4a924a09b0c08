"""The authoring revision's ``models``."""

from snodo_wire.models import *  # noqa: F403
