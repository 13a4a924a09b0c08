"""``ResponseCache``: answers that cannot have changed, given again without running the
handler.

What is kept: the lists (tools, prompts, resources, templates), resource reads, and
calls of the tools annotated ``readOnlyHint`` (the server's own, or a backend's as its
``tools/list`` showed them); never a call of a tool that is not read-only, an error, an
``isError`` result, a question (``input_required``) or any round of a flow that asked
one. An answer is kept for its caller alone: the key holds the caller
(``snodo.server.callers``: principal, else legacy session), its scopes and token
claims, the protocol version, what the client declared, and the params (``_meta`` and
the retry fields aside), hashed.

What clears it: a ``list_changed`` of the kind (the tools list also clears the kept
calls), or an update of the resource read, heard in this process or brought by the
notification bus. Every answer kept before is then passed over at once, in this
process; the store drops it in the background. Otherwise an answer lives ``ttl``
seconds. ``store``: where answers are kept (``snodo.stores.key_value``): this process's
memory by default, or an SQLite file or Redis that several workers share.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from snodo.core.context import Context
from snodo.core.types import CallNext
from snodo.server.callers import caller_of
from snodo.server.invoke import FailedCall
from snodo.stores.key_value import KeyValueStore, MemoryStore, key_value_store

if TYPE_CHECKING:
    from snodo.server import Server

__all__ = ["ResponseCache"]

log = logging.getLogger("snodo.middleware")

SECTIONS: Final = {
    "tools/list": "tools",
    "tools/call": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
}
"""The methods whose answers are kept, by the list change that clears them."""
_CHANGES: Final = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}
_LEFT_OUT: Final = frozenset({"_meta", "inputResponses", "requestState"})
_PASSING_CLAIMS: Final = frozenset({"exp", "iat", "nbf", "jti", "auth_time"})
"""Claims that differ from one token of a caller to the next, and say nothing of what
the caller may see."""
_MAX_URIS: Final = 10_000
"""Resources whose last update is remembered; older ones count as updated."""


class ResponseCache:
    """Keep answers ``ttl`` seconds in ``store`` (memory unless given), at most
    ``max_bytes`` each (a larger answer is given, not kept)."""

    def __init__(
        self,
        ttl: float = 60.0,
        *,
        store: str | KeyValueStore | None = None,
        max_bytes: int = 1_000_000,
    ) -> None:
        if not ttl > 0:
            raise ValueError("ttl must be a positive number of seconds")
        self.ttl = ttl
        self.store = MemoryStore() if store is None else key_value_store(store)
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._memory = self.store if isinstance(self.store, MemoryStore) else None
        self._server: Server | None = None
        self._read_only: dict[str, bool] = {}
        """A backend's tools, by name: whether its last listing said read-only."""
        self._cleared: dict[str, float] = {}
        """When each section was last cleared (a wall-clock time, as answers are kept)."""
        self._updated: OrderedDict[str, float] = OrderedDict()
        self._clearing: set[asyncio.Task[None]] = set()
        self._down = False

    def attach(self, server: Server) -> None:
        """Hear the server's list changes and resource updates (``Server`` calls it)."""
        if self._server is not None and self._server is not server:
            raise ValueError("a ResponseCache serves one server")
        self._server = server
        server.subscriptions.watchers.append(self._list_changed)
        server.subscriptions.update_watchers.append(self._resource_updated)

    async def cleared(self) -> None:
        """Wait for the clearing under way in a shared store (it runs in the background,
        so that a list change never waits on the store)."""
        while self._clearing:
            await asyncio.gather(*list(self._clearing), return_exceptions=True)

    async def aclose(self) -> None:
        """Finish the clearing under way and close the store's connections (the server's
        ``shutdown`` calls it)."""
        await self.cleared()
        close = getattr(self.store, "aclose", None)
        if close is not None:
            await close()

    # -- what clears it -----------------------------------------------------------------

    def _list_changed(self, key: str) -> None:
        section = _CHANGES.get(key)
        if section is not None:
            self._cleared[section] = time.time()
            self._drop(f"cache:{section}")
            if section == "resources":
                self._updated.clear()  # every read is older than the clearing now

    def _resource_updated(self, uri: str) -> None:
        self._updated[uri] = time.time()
        self._updated.move_to_end(uri)
        while len(self._updated) > _MAX_URIS:
            self._updated.popitem(last=False)
            self._cleared["resources"] = time.time()  # a forgotten update: clear all reads
        self._drop(_read_space(uri))

    def _drop(self, space: str) -> None:
        if self._memory is not None:
            self._memory.clear_now(space)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # before serving: nothing kept yet that another worker cannot pass over
        task = loop.create_task(self._clear(space))
        self._clearing.add(task)
        task.add_done_callback(self._clearing.discard)

    async def _clear(self, space: str) -> None:
        try:
            await self.store.clear(space)
        except (OSError, TimeoutError, RuntimeError) as exc:
            log.warning("ResponseCache: could not clear %s: %r", space, exc)

    # -- the request path -----------------------------------------------------------------

    async def __call__(self, ctx: Context, call_next: CallNext) -> Any:
        method = ctx.request_method
        section = SECTIONS.get(method)
        if section is None or ctx.is_retry:
            return await call_next(ctx)
        params = ctx.request_params
        if method == "tools/call" and not self._is_read_only(params.get("name")):
            return await call_next(ctx)
        uri = params.get("uri") if method == "resources/read" else None
        space = _read_space(uri) if isinstance(uri, str) else f"cache:{section}"
        key = _key(ctx)
        kept = await self._get(space, key)
        if kept is not None:
            at, outcome = kept
            if at >= self._cleared.get(section, 0.0) and (
                uri is None or at >= self._updated.get(uri, 0.0)
            ):
                self.hits += 1
                return outcome
        self.misses += 1
        outcome = await call_next(ctx)
        if (
            isinstance(outcome, dict)
            and not isinstance(outcome, FailedCall)
            and not outcome.get("isError")
        ):
            if method == "tools/list":
                self._learn(outcome)
            await self._put(space, key, outcome)
        return outcome

    def _is_read_only(self, name: Any) -> bool:
        if not isinstance(name, str):
            return False
        server = self._server
        tool = server.registry.tools.get(name) if server is not None else None
        if tool is not None:
            annotations = tool.definition.get("annotations")
            return isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True
        return self._read_only.get(name, False)

    def _learn(self, listed: Mapping[str, Any]) -> None:
        """What a listing says of each tool: read-only or not (a backend's tools)."""
        for tool in listed.get("tools") or ():
            if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
                annotations = tool.get("annotations")
                self._read_only[tool["name"]] = (
                    isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True
                )

    async def _get(self, space: str, key: str) -> tuple[float, Any] | None:
        try:
            if self._memory is not None:
                raw = self._memory.get_now(space, key)
            else:
                raw = await self.store.get(space, key)
        except (OSError, TimeoutError, RuntimeError) as exc:
            self._outage(exc)
            return None
        if raw is None:
            return None
        stamp, _, body = raw.partition(b"\n")
        try:
            return float(stamp), json.loads(body)
        except ValueError:
            return None

    async def _put(self, space: str, key: str, outcome: Any) -> None:
        try:
            body = json.dumps(outcome, ensure_ascii=False, separators=(",", ":")).encode()
        except (TypeError, ValueError):
            return  # not JSON as it stands (bytes kept for a proxy): given, not kept
        if len(body) > self.max_bytes:
            return
        raw = b"%r\n" % time.time() + body
        try:
            if self._memory is not None:
                self._memory.put_now(space, key, raw, self.ttl)
            else:
                await self.store.put(space, key, raw, self.ttl)
        except (OSError, TimeoutError, RuntimeError) as exc:
            self._outage(exc)
        else:
            self._down = False

    def _outage(self, exc: BaseException) -> None:
        if not self._down:
            self._down = True
            log.warning("ResponseCache: the store is unreachable, answering uncached: %r", exc)


def _read_space(uri: str) -> str:
    return "cache:read:" + hashlib.sha256(uri.encode()).hexdigest()[:32]


def _key(ctx: Context) -> str:
    """What an answer is kept under: everything of the request it may depend on."""
    params = {k: v for k, v in ctx.request_params.items() if k not in _LEFT_OUT}
    token = ctx.access_token
    claims = getattr(token, "claims", None)
    kept_claims = (
        {k: v for k, v in claims.items() if k not in _PASSING_CLAIMS}
        if isinstance(claims, Mapping)
        else None
    )
    described = [
        ctx.request_method,
        params,
        ctx.protocol_version,
        caller_of(ctx),
        None if ctx.scopes is None else sorted(ctx.scopes),
        kept_claims,
        dict(ctx.client_capabilities),
    ]
    text = json.dumps(described, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()
