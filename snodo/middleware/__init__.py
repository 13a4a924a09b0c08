"""The middleware every deployment writes by hand, written once.

``Server(middleware=[...])`` runs them around every handler, the first outermost (as
``@server.middleware`` adds them), in both eras (a legacy session's requests reach the
core through the bridge, round by round) and in front of a proxy's backend
(``snodo.gateway.proxy(..., middleware=[...])``):

* ``RateLimit``: calls per caller, counted in this process or shared through Redis;
* ``ResponseCache``: lists, reads and read-only tools' answers, kept per caller until a
  list change or a resource update;
* ``Timing`` and ``Logging``: how long each request took, and one structured line per
  request with nothing secret in it;
* ``Retry``: a handler run again when it fails with an exception named as passing;
* ``ResultLimit``: a result cut to a size, saying so;
* ``ErrorHandling``: failures counted, mapped to answers, masked.

Each is ``async def __call__(ctx, call_next)`` (``snodo.core.types.Middleware``); the
response cache also ``attach``es to its server, to hear what clears it. This package may
import the core, ``stores`` and ``server``.
"""

from snodo.middleware.error_handling import ErrorHandling
from snodo.middleware.rate_limit import RateLimit
from snodo.middleware.request_log import Logging
from snodo.middleware.response_cache import ResponseCache
from snodo.middleware.result_limit import ResultLimit
from snodo.middleware.retry import Retry
from snodo.middleware.timing import Timing

__all__ = [
    "ErrorHandling",
    "Logging",
    "RateLimit",
    "ResponseCache",
    "ResultLimit",
    "Retry",
    "Timing",
]
