"""The MCP Apps extension's wire package (``snodo_wire_apps``)."""

from snodo_wire_apps import *  # noqa: F403
