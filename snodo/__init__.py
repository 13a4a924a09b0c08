"""snodo: a schema-first toolkit for MCP servers of the current revision
(``snodo_wire.protocol.REVISION``), built around Multi Round-Trip Requests.

The names most programs need are here; the modules hold the rest: ``snodo.elicitation``,
``snodo.sampling`` and ``snodo.roots`` build input requests and read their answers,
``snodo.keyring`` and ``snodo.state`` seal request state, ``snodo.replay`` guards
one-time state, ``snodo.errors`` holds the JSON-RPC errors, ``snodo.transports`` the
stdio and HTTP adapters. The wire models are the separate package ``snodo_wire``.
"""

from snodo.client import Client, Flow, RequestError, TaskHandle
from snodo.context import Context
from snodo.errors import McpError
from snodo.keyring import Keyring
from snodo.result import MISSING, input_required, tool_error
from snodo.server import CacheHint, Reply, Server

__all__ = [
    "MISSING",
    "CacheHint",
    "Client",
    "Context",
    "Flow",
    "Keyring",
    "McpError",
    "Reply",
    "RequestError",
    "Server",
    "TaskHandle",
    "input_required",
    "tool_error",
]
__version__ = "0.1.0"
