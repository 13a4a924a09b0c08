"""One call's progress and log messages, to that call's own callbacks; and its deadline.

``call_tool(..., on_progress=..., on_log=..., log_level=...)`` (and ``read_resource``,
``get_prompt``) asks the server for them in the request's ``_meta``: a
``progressToken`` of its own, and the log level, which the modern revision makes opt-in
per request (server/utilities/logging.mdx: no level, no messages). Its notifications
then go to its callbacks: progress carrying its token to ``on_progress(progress,
total, message)``, log messages to ``on_log(params)``; anything else, or what no
callback is given for, to the client's ``on_notification``.

A legacy server reads the token the same way; its log level is the session's own
(``logging/setLevel``), so there ``log_level`` asks for nothing. Over stdio log
messages carry no request, so concurrent calls with ``on_log`` each hear them all.

``deadline=`` on one of those calls bounds that call (every round, and a task it
becomes) in place of the client's ``deadline``.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from snodo.core.context import LOG_LEVELS
from snodo.revisions.authoring.protocol import META_LOG_LEVEL

__all__ = ["CALL_DEADLINE", "OnLog", "OnProgress", "call_deadline", "call_scope"]

CALL_DEADLINE: ContextVar[float | None] = ContextVar("snodo_call_deadline", default=None)
"""The deadline one call was given (``deadline=`` on the call), over the client's."""


@contextlib.contextmanager
def call_deadline(seconds: float | None) -> Iterator[None]:
    """Within: the calls made have ``seconds`` as their deadline (None: the client's)."""
    if seconds is None:
        yield
        return
    if not (isinstance(seconds, int | float) and seconds > 0):
        raise ValueError("deadline must be a positive number of seconds")
    token = CALL_DEADLINE.set(float(seconds))
    try:
        yield
    finally:
        CALL_DEADLINE.reset(token)


OnProgress = Callable[[float, float | None, str | None], object]
"""Takes a call's ``notifications/progress``: progress, total, message."""
OnLog = Callable[[Mapping[str, Any]], object]
"""Takes a call's ``notifications/message`` params: level, data, logger."""

_tokens = itertools.count(1)


def call_scope(
    params: dict[str, Any],
    on_progress: OnProgress | None,
    on_log: OnLog | None,
    log_level: str | None,
    fallback: Callable[[dict[str, Any]], None],
) -> Callable[[dict[str, Any]], None] | None:
    """Put this call's requests for progress and logs into ``params["_meta"]`` and
    return the callback that routes its notifications; None when it asks for neither."""
    if log_level is not None and log_level not in LOG_LEVELS:
        raise ValueError(f"log_level must be one of {', '.join(LOG_LEVELS)}")
    if on_progress is None and on_log is None and log_level is None:
        return None
    meta = dict(params.get("_meta") or {})
    token = None
    if on_progress is not None:
        token = meta.setdefault("progressToken", f"call-{next(_tokens)}")
    if log_level is not None or on_log is not None:
        meta.setdefault(META_LOG_LEVEL, log_level or "info")
    params["_meta"] = meta

    def notify(note: dict[str, Any]) -> None:
        method = note.get("method")
        raw = note.get("params")
        body: dict[str, Any] = raw if isinstance(raw, dict) else {}
        ours = method == "notifications/progress" and body.get("progressToken") == token
        if on_progress is not None and ours and isinstance(body.get("progress"), int | float):
            on_progress(body["progress"], body.get("total"), body.get("message"))
            return
        if on_log is not None and method == "notifications/message":
            on_log(body)
            return
        fallback(note)

    return notify
