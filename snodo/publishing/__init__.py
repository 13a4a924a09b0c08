"""Publishing a server: its Server Card, its MCP Registry entry and its MCP Bundle, each
made from what the server declares and checked by the models generated from the
document's pinned schema.

``server_card`` (``card``) and ``server_json`` (``registry``) share one reading of who
the server is (``identity``); ``ai_catalog`` (``catalog``) lists cards for a site;
``build_bundle`` (``bundle``) writes a ``.mcpb`` with snodo and what it needs vendored
(``vendoring``), and ``unpack`` reads one back for ``snodo install``. The commands are
``snodo card``, ``snodo server-json`` and ``snodo bundle``; the HTTP app serves the card
at ``<endpoint>/server-card`` (``snodo.transports.card_route``).

It reads a ``Server`` and may import the core and ``snodo.server``; the transports and
the command line import it.
"""

from snodo.publishing.card import card_bytes, server_card
from snodo.publishing.catalog import ai_catalog, identifier
from snodo.publishing.identity import PublishingError
from snodo.publishing.registry import server_json

__all__ = [
    "PublishingError",
    "ai_catalog",
    "card_bytes",
    "identifier",
    "server_card",
    "server_json",
]
