"""The authoring revision's ``protocol``."""

from snodo_wire.protocol import *  # noqa: F403
