"""Gateways: serve another MCP server, of either era and over either transport, as a
snodo server (``proxy``).

The package may import the core, ``snodo.server`` and ``snodo.client``; the command
line (``snodo proxy``) drives it.
"""

from snodo.gateway.forwarding import BackendError, Proxy, proxy

__all__ = ["BackendError", "Proxy", "proxy"]
