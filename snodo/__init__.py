"""snodo: a schema-first toolkit for MCP servers of the current revision
(``snodo_wire.protocol.REVISION``), built around Multi Round-Trip Requests.

The names most programs need are here, with the modules a handler asks the client
with (``elicitation``, ``sampling``, ``roots``, from ``snodo.asking``). The protocol core
is ``snodo.core``, with no I/O; each role has a package above it: ``snodo.asking``,
``snodo.stores`` (memory, SQLite, Redis), ``snodo.server`` (the Server and its
handlers), ``snodo.legacy`` (the initialize-based era), ``snodo.transports`` (stdio and
HTTP), ``snodo.client``, ``snodo.auth`` and ``snodo.oauth``, ``snodo.otel``,
``snodo.gateway``, ``snodo.extensions`` (MCP Apps, Skills, Tasks) and ``snodo.cli``;
docs/architecture.md draws them. The wire models are the separate package
``snodo_wire``.

A program imports from here or from one of those packages (``snodo.server``,
``snodo.stores``, ``snodo.asking``, ``snodo.client``, ``snodo.transports``,
``snodo.auth``, ...), never from a module inside one. Importing snodo changes nothing
outside it: ``MISSING`` is pydantic's own sentinel, as pydantic makes it.
"""

from snodo.asking import elicitation, roots, sampling
from snodo.client import Client, Flow, RequestError
from snodo.core.context import Context
from snodo.core.errors import InvalidParams, InvalidState, McpError, ResourceNotFound
from snodo.core.result import (
    MISSING,
    InputRequired,
    ToolError,
    input_required,
    tool_error,
    url_required,
)
from snodo.core.state.keyring import Keyring
from snodo.server import CacheHint, Caching, Limits, Publishing, Reply, Server, Spec, State
from snodo.server.asks import Ask
from snodo.server.dependencies import Depends
from snodo.server.media import Audio, File, Image, link

__all__ = [
    "MISSING",
    "Ask",
    "Audio",
    "CacheHint",
    "Caching",
    "Client",
    "Context",
    "Depends",
    "File",
    "Flow",
    "Image",
    "InputRequired",
    "InvalidParams",
    "InvalidState",
    "Keyring",
    "Limits",
    "McpError",
    "Publishing",
    "Reply",
    "RequestError",
    "ResourceNotFound",
    "Server",
    "Spec",
    "State",
    "ToolError",
    "elicitation",
    "input_required",
    "link",
    "roots",
    "sampling",
    "tool_error",
    "url_required",
]
__version__ = "0.1.0"
