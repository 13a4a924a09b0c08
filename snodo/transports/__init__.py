"""Thin adapters that carry the core's messages over stdio and Streamable HTTP.

``stdio`` and ``http`` (with ``http_exchange``, ``http_head``, ``http_aside``,
``late_requests`` and ``lifespan``) serve a ``snodo.server.Server``, and hand legacy traffic to
``snodo.legacy``. They may import the core, ``snodo.server``, ``snodo.legacy`` and
``snodo.auth``; only the command line and applications import them. The client's
transports are ``snodo.client.transports``.
"""
