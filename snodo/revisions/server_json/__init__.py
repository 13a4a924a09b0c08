"""The MCP Registry's server.json: the document's generated package (``snodo_wire_server_json``)."""

from snodo_wire_server_json import *  # noqa: F403
from snodo_wire_server_json.protocol import *  # noqa: F403
