"""Serving initialize-based (legacy) clients beside modern ones, from one server.

``limits`` (bounds, carried by ``Server(legacy=...)``), ``wire`` (versions, result
shape), ``session`` (one client's negotiated facts and requests in flight), ``bridge``
(MRTR handlers serving legacy sessions), ``kernel`` (the session's methods),
``stdio`` and ``http`` (the transport hooks). Only ``limits`` is imported here: the
others import the server, which imports this package.
"""

from snodo.legacy.limits import LegacyLimits

__all__ = ["LegacyLimits"]
