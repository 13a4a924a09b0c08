"""A legacy POST's SSE stream resumed with ``Last-Event-ID``: the events the log kept
after the one named, then the rest as they come, whichever worker runs the request."""

from __future__ import annotations

import asyncio
import contextlib

from snodo.legacy.events import EventLog
from snodo.legacy.http_replies import (
    Receive,
    Send,
    plain,
    sse_event,
    sse_start,
    unavailable,
    wait_disconnect,
)
from snodo.legacy.store import StoreUnavailable

__all__ = ["resume"]


async def resume(
    events: EventLog, session: str, where: tuple[str, int], receive: Receive, send: Send
) -> None:
    """A POST's SSE stream, resumed: the events after the one named, then the rest as
    they come (from whichever worker runs the request), its answer last."""
    replay = events.replay(session, *where)
    try:
        first = await anext(replay, None)
    except LookupError:
        await plain(send, 400, b"that stream's events are no longer kept")
        return
    except StoreUnavailable as exc:
        await unavailable(send, str(exc))
        return
    await sse_start(send)
    watcher = asyncio.ensure_future(wait_disconnect(receive))
    try:
        item = first
        while item is not None and item[1] is not None:
            await sse_event(send, item[1], f"{where[0]}.{item[0]}")
            following = asyncio.ensure_future(anext(replay, None))
            await asyncio.wait({following, watcher}, return_when="FIRST_COMPLETED")
            if not following.done():
                following.cancel()
                break  # the client went away again
            item = following.result()
    except StoreUnavailable:
        pass  # the client may resume again
    finally:
        watcher.cancel()
        await replay.aclose()
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
