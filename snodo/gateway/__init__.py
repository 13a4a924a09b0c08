"""Gateways: serve other MCP servers, of either era and over either transport, through
snodo: ``proxy`` (one server behind a snodo server), ``mount`` (a server inside
another, under a prefix), ``ClientGroup`` (one client for many servers) and
``serve_group`` (many servers, from the ``mcpServers`` configuration, as one); each takes
a ``Shape`` of what it serves (filters, names, tools reshaped).

The package may import the core, ``snodo.server`` and ``snodo.client``; the command
line (``snodo proxy``) drives it.
"""

from snodo.gateway.composite import SEPARATOR
from snodo.gateway.forwarding import BackendError, Proxy, proxy
from snodo.gateway.group import ClientGroup, serve_group, servers
from snodo.gateway.mounting import mount
from snodo.gateway.shaping import Shape

__all__ = [
    "SEPARATOR",
    "BackendError",
    "ClientGroup",
    "Proxy",
    "Shape",
    "mount",
    "proxy",
    "serve_group",
    "servers",
]
