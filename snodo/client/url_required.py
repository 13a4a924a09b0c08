"""A legacy server's URLElicitationRequiredError (-32042, the legacy client/elicitation.mdx).

Such a server answers a request with the URLs the user must visit before it can go on,
each with an ``elicitationId``. With a ``url_elicitation`` handler the client shows them
as it shows any URL elicitation (the same checks: ``http``/``https`` only); when the
user accepts every one, it waits for the server's ``notifications/elicitation/complete``
of each id, and then sends the request again, once. The wait is the call's own budget
(its deadline, else ``request_timeout``). Declined, cancelled, no handler, or no
completion in time: ``UrlElicitationRequired`` (a ``RequestError``), carrying the
elicitations, so the host can offer the user to retry (the revision's SHOULD).
Completion notifications for ids the client is not waiting on are ignored, as the page
requires.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from snodo.client.errors import ProtocolViolation, RequestError
from snodo.client.handlers import InputHandlers
from snodo.revisions import REVISIONS

__all__ = ["URL_REQUIRED", "Completions", "UrlElicitationRequired"]

URL_REQUIRED: int = REVISIONS.newest("legacy").errors.ErrorCode.URL_ELICITATION_REQUIRED
"""A legacy server's -32042, from the legacy revision's error codes."""

COMPLETE = "notifications/elicitation/complete"


class UrlElicitationRequired(RequestError):
    """-32042 from a legacy server: ``elicitations`` (URL-mode ``elicitation/create``
    params, each with its ``elicitationId``) must be completed before the request can
    succeed; send it again once the user has."""

    @property
    def elicitations(self) -> list[dict[str, Any]]:
        """The URL elicitations the server named (``data.elicitations``)."""
        found = self.data.get("elicitations") if isinstance(self.data, dict) else None
        return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


def _elicitations(refused: RequestError) -> list[dict[str, Any]]:
    found = refused.data.get("elicitations") if isinstance(refused.data, dict) else None
    if not isinstance(found, list) or not found:
        raise ProtocolViolation("a -32042 error without data.elicitations")
    for item in found:
        ok = isinstance(item, dict) and item.get("mode") == "url"
        if not ok or not isinstance(item.get("elicitationId"), str):
            raise ProtocolViolation("a -32042 elicitation that is not URL mode with an id")
    return found


class Completions:
    """The ``elicitationId``s the client waits on, set as their completions arrive."""

    def __init__(self) -> None:
        self.waiting: dict[str, asyncio.Event] = {}

    def notified(self, note: Mapping[str, Any]) -> None:
        """Mark a completion the client waits for; any other is ignored."""
        if note.get("method") != COMPLETE:
            return
        params = note.get("params")
        elicitation_id = params.get("elicitationId") if isinstance(params, dict) else None
        event = self.waiting.get(elicitation_id) if isinstance(elicitation_id, str) else None
        if event is not None:
            event.set()

    async def visit(self, refused: RequestError, inputs: InputHandlers, budget: float) -> None:
        """Show the user each URL, then wait up to ``budget`` seconds for all of them to
        complete; ``UrlElicitationRequired`` whenever the request cannot be sent again."""
        wanted = _elicitations(refused)
        unmet = UrlElicitationRequired(refused.code, refused.message, refused.data)
        if inputs.url_elicitation is None:
            raise unmet
        events = {e["elicitationId"]: asyncio.Event() for e in wanted}
        self.waiting.update(events)
        try:
            for elicitation in wanted:
                request = {"method": "elicitation/create", "params": elicitation}
                answer = await inputs.answer(request)
                if answer.get("action") != "accept":
                    raise unmet
            async with asyncio.timeout(budget):
                for event in events.values():
                    await event.wait()
        except TimeoutError:
            raise unmet from None
        finally:
            for elicitation_id in events:
                self.waiting.pop(elicitation_id, None)
