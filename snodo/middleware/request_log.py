"""``Logging``: one structured line per request, with nothing secret in it.

Each request is one record, logged as a JSON object on the ``snodo.requests`` logger (and
handed to handlers as the record's ``mcp`` attribute, for a structured formatter):
``method``, the ``item`` it names (a tool or prompt name, a resource URI without its
query, a completion's reference), the ``principal``, the ``transport``, the protocol
``version``, whether it is a ``retry`` of a flow, the ``arguments`` it passed (their
names), its ``outcome`` (``complete``, ``tool_error``, ``input_required``, ``stream``
or ``error``, with the JSON-RPC ``code``) and how long it took (``ms``). Never an
argument's value, a token, a legacy session's id, a request state or an answer.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from snodo.core.context import Context
from snodo.core.errors import McpError
from snodo.core.result import InputRequired
from snodo.core.types import CallNext, OpenStream

__all__ = ["Logging", "item_of", "outcome_of"]


def item_of(ctx: Context) -> str | None:
    """What the request names: a tool or prompt, a resource URI (its query left out: it
    may carry a secret), a completion's reference; None for a list."""
    params = ctx.request_params
    name = params.get("name")
    if isinstance(name, str):
        return name
    uri = params.get("uri")
    if isinstance(uri, str):
        return uri.partition("?")[0]
    ref = params.get("ref")
    if isinstance(ref, Mapping):
        found = ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")
        return found.partition("?")[0] if isinstance(found, str) else None
    return None


def outcome_of(outcome: Any) -> str:
    """A handler's answer in one word."""
    if isinstance(outcome, InputRequired):
        return "input_required"
    if isinstance(outcome, OpenStream):
        return "stream"
    if isinstance(outcome, Mapping) and outcome.get("isError"):
        return "tool_error"
    return "complete"


class Logging:
    """One line per request on ``logger`` (``snodo.requests``) at ``level`` (INFO)."""

    def __init__(
        self,
        *,
        logger: logging.Logger | None = None,
        level: int = logging.INFO,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.log = logger or logging.getLogger("snodo.requests")
        self.level = level
        self.clock = clock

    async def __call__(self, ctx: Context, call_next: CallNext) -> Any:
        if not self.log.isEnabledFor(self.level):
            return await call_next(ctx)
        started = self.clock()
        code: int | None = None
        outcome: Any = None
        try:
            outcome = await call_next(ctx)
            return outcome
        except McpError as exc:
            code = exc.code
            raise
        except Exception:
            code = -32603  # what the core answers for it
            raise
        finally:
            self._record(ctx, outcome, code, (self.clock() - started) * 1000)

    def _record(self, ctx: Context, outcome: Any, code: int | None, ms: float) -> None:
        arguments = ctx.request_params.get("arguments")
        record: dict[str, Any] = {
            "method": ctx.request_method,
            "item": item_of(ctx),
            "principal": ctx.principal,
            "transport": ctx.transport,
            "version": ctx.protocol_version,
            "retry": ctx.is_retry,
            "arguments": sorted(arguments) if isinstance(arguments, Mapping) else None,
            "outcome": "error" if code is not None else outcome_of(outcome),
            "code": code,
            "ms": round(ms, 3),
        }
        self.log.log(
            self.level, json.dumps(record, ensure_ascii=False, default=str), extra={"mcp": record}
        )
