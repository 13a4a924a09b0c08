"""snodo: a schema-first toolkit for MCP servers of the current revision
(``snodo_wire.protocol.REVISION``), built around Multi Round-Trip Requests.

The names most programs need are here, with the modules a handler asks the client
with (``elicitation``, ``sampling``, ``roots``, from ``snodo.asking``). The protocol core
is ``snodo.core``, with no I/O; each role has a package above it: ``snodo.asking``,
``snodo.stores`` (memory, SQLite, Redis), ``snodo.tasks`` (the Tasks extension),
``snodo.server`` (the Server and its handlers), ``snodo.legacy`` (the initialize-based
era), ``snodo.transports`` (stdio and HTTP), ``snodo.client``, ``snodo.auth`` and
``snodo.oauth``, ``snodo.otel``, ``snodo.gateway`` and ``snodo.cli``;
docs/architecture.md draws them. The wire models are the separate package
``snodo_wire``.
"""

import contextlib
import warnings

from snodo.asking import elicitation, roots, sampling
from snodo.client import Client, Flow, RequestError, TaskHandle
from snodo.core.context import Context
from snodo.core.errors import McpError
from snodo.core.result import MISSING, input_required, tool_error, url_required
from snodo.core.state.keyring import Keyring
from snodo.server import CacheHint, Reply, Server
from snodo.server.asks import Ask
from snodo.server.dependencies import Depends
from snodo.server.media import Audio, File, Image

__all__ = [
    "MISSING",
    "Ask",
    "Audio",
    "CacheHint",
    "Client",
    "Context",
    "Depends",
    "File",
    "Flow",
    "Image",
    "Keyring",
    "McpError",
    "Reply",
    "RequestError",
    "Server",
    "TaskHandle",
    "elicitation",
    "input_required",
    "roots",
    "sampling",
    "tool_error",
    "url_required",
]
__version__ = "0.1.0"


def _falsy(sentinel: object) -> None:
    """Make pydantic's ``MISSING`` read as false, so ``if result.is_error:`` and ``if
    tool.output_schema:`` mean what they say of a field left out.

    ``MISSING`` is the one object the wire models hold for every absent field, and what
    ``response(ctx, key, request)`` returns for no answer. pydantic makes it truthy;
    this gives that single object a subclass of its own class that is false, and changes
    nothing else (identity, repr, pickling, how pydantic omits it when dumping). Where
    the class cannot change, it stays truthy and ``is MISSING`` still holds.
    """
    kind = type(sentinel)
    if not sentinel:
        return
    with warnings.catch_warnings():  # typing_extensions frowns on subclassing sentinels
        warnings.simplefilter("ignore", DeprecationWarning)
        falsy = type(kind.__name__, (kind,), {"__slots__": (), "__bool__": _false})
        falsy.__module__ = kind.__module__
    with contextlib.suppress(TypeError):  # a sentinel whose class cannot change
        object.__setattr__(sentinel, "__class__", falsy)


def _false(self: object) -> bool:
    return False


_falsy(MISSING)
