"""The authoring revision's wire package (``snodo_wire``), for typing and authoring.

Handlers, results and the client's public types are written against these models; what
a request is checked with is the negotiated revision's package (``snodo.revisions``).
"""

from snodo_wire import *  # noqa: F403
