"""The MCP Apps extension's ``protocol``."""

from snodo_wire_apps.protocol import *  # noqa: F403
