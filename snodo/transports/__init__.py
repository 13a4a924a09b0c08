"""Thin adapters that carry the core's messages over stdio and Streamable HTTP.

``stdio`` and ``http`` (with ``http_exchange``, ``http_head``, ``http_routes``,
``late_requests`` and ``lifespan``) serve a ``snodo.server.Server``, and hand legacy traffic to
``snodo.legacy``. They may import the core, ``snodo.server``, ``snodo.legacy`` and
``snodo.auth``; only the command line and applications import them. The client's
transports are ``snodo.client.transports``.

``HttpApp`` (the ASGI application, to mount in a web framework or run with any ASGI
server) and ``serve_stdio`` are the names an application uses.
"""

from snodo.transports.http import HttpApp, Unauthorized
from snodo.transports.stdio import serve_stdio

__all__ = ["HttpApp", "Unauthorized", "serve_stdio"]
