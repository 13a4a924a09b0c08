"""Serving initialize-based (legacy) clients beside modern ones, from one server.

``wire`` (versions, result shape), ``session`` (one client's negotiated facts and
requests in flight), ``bridge`` (MRTR handlers serving legacy sessions), ``kernel`` (the
session's methods), ``stdio`` and ``http`` (the transport hooks), with HTTP's parts:
``http_answer`` (one POST), ``http_replies``, ``events`` (resumable streams), ``store``,
``relay`` and ``shared`` (sessions on any worker) and ``stateless`` (no sessions).

May import the core, ``snodo.core.state`` and ``snodo.server``; only ``snodo.transports``
imports it, so the server never knows it is there. Its bounds are the server's setting
(``snodo.server.LegacyLimits``).
"""
