"""Serving initialize-based (legacy) clients beside modern ones, from one server.

``wire`` (versions, result shape), ``session`` (one client's negotiated facts and
requests in flight), ``bridge`` (MRTR handlers serving legacy sessions), ``methods`` (the
session's methods), ``stdio`` and ``http`` (the transport hooks: ``http`` is the session
table), with HTTP's parts: ``post`` (one POST answered, its stream resumed),
``replies`` (what goes back: JSON, SSE events, refusals), ``events`` (resumable
streams), ``owners``, ``store``, ``relay`` and ``shared`` (sessions on any worker) and
``stateless`` (no sessions).

May import the core, ``snodo.core.state`` and ``snodo.server``; only ``snodo.transports``
imports it, so the server never knows it is there. Its bounds are the server's setting
(``snodo.server.LegacyLimits``).
"""
