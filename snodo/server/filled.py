"""What the runtime fills of a revision's definitions, declared as data.

``python -m generator coverage`` reads these declarations to say, field by field, what a
revision defines that no runtime code fills, and ``add-revision`` keeps a revision whose
required field nothing fills a draft, named. tests/server/test_filled.py holds each
declaration to what the handlers answer, both ways: a key a handler answers with is
declared, and a declared key is answered by some server.

A field a handler's own value may carry (a tool returning a whole ``CallToolResult``, a
prompt a whole ``GetPromptResult``) is the author's, not the runtime's: it is not
declared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "CORE_FIELDS",
    "DERIVED",
    "FLAGS",
    "HANDLED",
    "LEGACY_FIELDS",
    "RESULT_FIELDS",
    "SENT",
]

RESULT_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "server/discover": frozenset({"supportedVersions", "capabilities", "instructions"}),
    "tools/list": frozenset({"tools", "nextCursor", "cacheScope"}),
    "tools/call": frozenset({"content", "structuredContent", "outputs", "isError"}),
    "resources/list": frozenset({"resources", "nextCursor", "cacheScope"}),
    "resources/templates/list": frozenset({"resourceTemplates", "nextCursor", "cacheScope"}),
    "resources/read": frozenset({"contents", "ttlMs", "cacheScope"}),
    "prompts/list": frozenset({"prompts", "nextCursor", "cacheScope"}),
    "prompts/get": frozenset({"messages"}),
    "completion/complete": frozenset({"completion"}),
    "subscriptions/listen": frozenset(),
}
"""The result fields each method's handler fills (``snodo.server.methods``), by wire
name, in whichever revision's shape: ``tools/call`` answers ``content`` and
``structuredContent``, or ``outputs`` (``snodo.server.tool_encoders``)."""

DERIVED: Final[Mapping[str, frozenset[str]]] = {"Tool": frozenset({"outputVariants"})}
"""Fields of a listed item the runtime derives from what the author declared, with no
decorator keyword of their own: a tool's ``outputVariants`` from its return type or
``output_schema`` (``snodo.server.tool_encoders``)."""

LEGACY_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "initialize": frozenset({"protocolVersion", "capabilities", "serverInfo", "instructions"}),
    "ping": frozenset(),
    "logging/setLevel": frozenset(),
    "resources/subscribe": frozenset(),
    "resources/unsubscribe": frozenset(),
}
"""The result fields of the methods a legacy session's kernel answers itself
(``snodo.legacy.methods``); the rest it answers through the handlers above."""

CORE_FIELDS: Final = frozenset({"resultType", "_meta"})
"""What the core adds to every complete result (``snodo.core.request_path``); a cacheable
method's result gets the caching hints its revision's overlay names too."""

FLAGS: Final = frozenset(
    {
        "tools",
        "tools.listChanged",
        "resources",
        "resources.listChanged",
        "resources.subscribe",
        "prompts",
        "prompts.listChanged",
        "completions",
        "logging",
        "extensions",
    }
)
"""The ``ServerCapabilities`` paths the server advertises from what is registered
(``Registry.capabilities``); any other a revision defines is set with
``Spec(capabilities={...})``."""

SENT: Final = frozenset(
    {
        "notifications/progress",
        "notifications/message",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/subscriptions/acknowledged",
        "notifications/cancelled",
        "notifications/elicitation/complete",
    }
)
"""The notifications the server sends, to the clients of revisions that define them."""

HANDLED: Final = frozenset({"notifications/cancelled", "notifications/initialized"})
"""The client notifications the server acts on (the rest are ignored, as JSON-RPC
allows)."""
