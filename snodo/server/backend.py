"""A backend: another server whose features this one serves (``snodo.gateway``).

A ``Server`` with a backend answers the feature methods (``FORWARDED``: the lists,
``tools/call``, ``resources/read``, ``prompts/get``, ``completion/complete``) by handing
them to it, after every check the server makes of any request (``_meta``, version,
params, a retry's sealed state and its answers) and before it stamps the result. What
the backend offers is what ``server/discover`` and a legacy ``initialize`` advertise.
The backend may answer ``InputRequired``: the server admits and seals it like a
handler's, and a legacy session's bridge asks its client the questions, so either
era's client can answer a backend that asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from snodo.core.context import Context
from snodo.core.result import InputRequired

__all__ = ["FEATURES", "FORWARDED", "Backend"]

FORWARDED: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
)
"""The methods a server with a backend forwards to it."""

FEATURES: Final = ("tools", "resources", "prompts", "completions", "logging")
"""The server capabilities a backend's answer decides. The extensions it declares are
not taken: an extension passes through a gateway only by a gateway half of its own
(``snodo.gateway.passing``)."""


class Backend(Protocol):
    """What a server needs of the server behind it."""

    def capabilities(self) -> Mapping[str, Any]:
        """The backend's server capabilities, as it last advertised them."""
        ...

    async def forward(
        self, ctx: Context, params: Mapping[str, Any]
    ) -> dict[str, Any] | InputRequired:
        """Answer ``ctx.request_method`` with ``params`` (the request's, ``_meta`` aside)."""
        ...
