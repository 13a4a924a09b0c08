"""An MCP Bundle's manifest.json: the document's generated package (``snodo_wire_mcpb``)."""

from snodo_wire_mcpb import *  # noqa: F403
from snodo_wire_mcpb.protocol import *  # noqa: F403
