"""A server's Server Card, read before connecting (``Client.server_card(url)``).

The card is at ``<url>/server-card`` for a server whose streamable-HTTP endpoint is
``url`` (a URL ending in ``/server-card`` is read as it is). It is asked for with its
media type in ``Accept``, as the card's discovery rules say, read up to ``MAX_BYTES``
and checked by the generated ``ServerCard`` model. A card is advisory: what the live
connection says wins where the two disagree. A server that publishes none answers 404:
``None``. Anything else is ``TransportError`` (no answer, another status) or
``ProtocolViolation`` (not a card).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import ValidationError

from snodo.client.errors import ProtocolViolation, TransportError

if TYPE_CHECKING:
    from snodo.revisions.server_card import ServerCard

__all__ = ["MAX_BYTES", "card_url", "read_card"]

MAX_BYTES = 256 * 1024
"""The longest card read: a card is a few hundred bytes of metadata."""


def card_url(url: str) -> str:
    """Where the card of the endpoint at ``url`` is."""
    from snodo.revisions.server_card import CARD_SUFFIX  # noqa: PLC0415 - see read_card

    base = url.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    return base if base.endswith(CARD_SUFFIX) else base + CARD_SUFFIX


async def read_card(
    url: str, *, timeout: float = 10.0, headers: Mapping[str, str] | None = None
) -> ServerCard | None:
    """The card of the server at ``url``, checked; None when it publishes none.
    ``headers`` are sent too (a card is public, but a server may guard every path)."""
    # Imported here: the card's models load only for a client that reads one, and the
    # client's own HTTP/1.1 needs the snodo[http] extra.
    from snodo.client.transports.http11 import Origin, WireError  # noqa: PLC0415
    from snodo.revisions.server_card import MEDIA_TYPE, ServerCard  # noqa: PLC0415

    where = card_url(url)
    origin = Origin(where, timeout=timeout)
    try:
        sent = {"accept": f"{MEDIA_TYPE}, application/json", **(headers or {})}
        answer = await origin.open("GET", sent)
        try:
            body = bytearray()
            async for chunk in answer.chunks():
                body += chunk
                if len(body) > MAX_BYTES:
                    raise ProtocolViolation(f"{where}: the card is larger than {MAX_BYTES} bytes")
        finally:
            await answer.aclose()
    except (WireError, OSError) as exc:
        raise TransportError(f"{where}: {exc}") from exc
    finally:
        await origin.aclose()
    if answer.status == 404:
        return None
    if answer.status != 200:
        raise TransportError(f"{where} answered {answer.status}")
    try:
        return ServerCard.model_validate(json.loads(body))
    except (ValueError, ValidationError) as exc:
        raise ProtocolViolation(f"{where} is not a Server Card: {exc}") from None
