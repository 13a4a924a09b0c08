"""snodo: a schema-first toolkit for MCP servers of the current revision
(``snodo_wire.protocol.REVISION``), built around Multi Round-Trip Requests.

The names most programs need are here. The modules directly in this package are the
protocol core every role shares, with no I/O: JSON-RPC framing (``jsonrpc``), errors,
capabilities and admission, the request ``Context``, results, header mapping, the
observer interface, and what a handler asks with (``elicitation``, ``sampling``,
``roots``, read through ``answers``). They import no snodo package. Each role has a
package above them: ``snodo.state`` (sealed state), ``snodo.tasks`` (the Tasks
extension), ``snodo.server`` (the Server and its handlers), ``snodo.legacy`` (the
initialize-based era), ``snodo.transports`` (stdio and HTTP), ``snodo.client``,
``snodo.auth`` and ``snodo.oauth``, ``snodo.otel`` and ``snodo.cli``;
docs/architecture.md draws them. The wire models are the separate package
``snodo_wire``.
"""

import contextlib
import warnings

from snodo.client import Client, Flow, RequestError, TaskHandle
from snodo.context import Context
from snodo.errors import McpError
from snodo.result import MISSING, input_required, tool_error, url_required
from snodo.server import CacheHint, Reply, Server
from snodo.server.asks import Ask
from snodo.server.dependencies import Depends
from snodo.server.media import Audio, File, Image
from snodo.state.keyring import Keyring

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
    "input_required",
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
