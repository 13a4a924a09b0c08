"""Replay guards: at-most-once consumption of one-time request state.

Theory of operation
-------------------
A sealed token proves the server made it for this request and principal, but a copy
opens as well as the original until it expires. basic/patterns/mrtr.mdx: "servers
needing at-most-once consumption MUST enforce that server-side". A token sealed with
``once=True`` carries a random 128-bit id; ``Keyring.open_once`` verifies the token
and then calls ``guard.consume(id, expires_at)``, which answers True for the first
call with an id and False for every later one, until ``expires_at``.

* ``expires_at`` is Unix seconds by the guard's clock. After it the id is forgotten
  (pruned), and a new consume of it answers True again. That is safe because the
  state layer never asks about a token past its expiry: it refuses expired tokens
  first and asks the guard to hold ids until ``exp + CLOCK_SKEW``, so even a node
  whose clock lags by the tolerated skew finds the id still held.
* An id whose ``expires_at`` has already passed by the guard's clock answers False:
  the guard could not remember it, so it cannot promise "once". This fails closed when
  the guard's clock runs ahead of the nodes' (keep them in sync, within the skew).
* A store that fails (Redis down, SQLite locked past its timeout) raises. The request
  then fails as an internal error instead of skipping the check.

The protocol is async. The server core is async, and the distributed store is a
network round trip that must not block the event loop serving other requests. A sync
protocol would force a blocking socket or a nested loop on Redis; an async one costs
the in-memory store nothing and lets SQLite wait for its lock in a worker thread.

Stores:

* ``MemoryGuard``: one process (every worker of a multi-process server has its own, so
  use it only with one). Bounded: past ``max_ids`` live ids it answers False (fails
  closed) rather than forget an id that is still live; expired ids are pruned on
  every call from a heap ordered by expiry.
The two stores that outlive a process are in ``snodo.stores.replay``:

* ``SQLiteGuard(path)``: stdlib sqlite3. Survives restarts, and several processes on
  one host can share the file: WAL mode, a busy timeout, and each consume is one
  ``BEGIN IMMEDIATE`` transaction that prunes expired rows and inserts the id into a
  PRIMARY KEY column, so exactly one inserter wins. ``synchronous=FULL``: a consumed
  id must survive a power cut, or the token could be replayed after it.
* ``RedisGuard(url or client)``: the distributed store, one ``SET key 1 NX PX ms`` per
  consume (atomic on the server; exactly one SET NX of a key succeeds). With a URL it
  uses the ``redis`` package's asyncio client (the ``snodo[redis]`` extra), which gets
  TLS, ACL auth and connection pooling right. Pass a ``redis.asyncio.Redis`` (or
  anything with the same ``set``) instead to reuse a configured client, Sentinel and
  Cluster included. PX is relative and computed with the guard's clock, so the Redis
  host's clock does not matter.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Final, Protocol

__all__ = ["DEFAULT_TIMEOUT", "MemoryGuard", "ReplayGuard", "check_consume"]

log = logging.getLogger("snodo")

MAX_ID_LENGTH: Final = 128
"""Characters; state's ids are 22. Bounds what a caller can make a store keep."""
DEFAULT_MAX_IDS: Final = 100_000
"""Live ids a MemoryGuard holds: about 270 one-time retries a second, each id held for the
default 300 s lifetime plus the 60 s clock skew."""
DEFAULT_TIMEOUT: Final = 5.0
"""Seconds to wait for a lock (SQLite) or a connect plus reply (Redis) before failing."""


class ReplayGuard(Protocol):
    """Remembers consumed ids until they expire."""

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """True the first time ``token_id`` is consumed, False until ``expires_at`` passes.

        ``expires_at`` is Unix seconds. False also when it has already passed.
        """
        ...


def check_consume(token_id: object, expires_at: object) -> None:
    """Caller bugs, not peer input: the state layer only passes well-formed values."""
    if not isinstance(token_id, str) or isinstance(expires_at, bool):
        raise TypeError("consume(token_id: str, expires_at: float)")
    if not isinstance(expires_at, int | float):
        raise TypeError("expires_at must be Unix seconds")
    if not math.isfinite(expires_at):
        raise ValueError("expires_at must be finite")
    if not 0 < len(token_id) <= MAX_ID_LENGTH:
        raise ValueError(f"token_id must be 1 to {MAX_ID_LENGTH} characters")


class MemoryGuard:
    """Consumed ids in a dict, with a heap for pruning; one process only."""

    def __init__(
        self, *, max_ids: int = DEFAULT_MAX_IDS, clock: Callable[[], float] = time.time
    ) -> None:
        if isinstance(max_ids, bool) or not isinstance(max_ids, int) or max_ids < 1:
            raise ValueError("max_ids must be a positive integer")
        self.max_ids = max_ids
        self.clock = clock
        self._expiry: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []
        # consume never awaits, so one event loop cannot interleave it; the lock is for
        # servers that share one guard between threads (each with its own loop).
        self._lock = threading.Lock()

    def size(self) -> int:
        """Ids held (expired ones until the next consume prunes them)."""
        return len(self._expiry)

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """True the first time ``token_id`` is consumed; False after, when already
        expired, or when ``max_ids`` live ids are held."""
        check_consume(token_id, expires_at)
        with self._lock:
            now = self.clock()
            if not expires_at > now:
                return False
            while self._heap and self._heap[0][0] <= now:
                expired, old = heapq.heappop(self._heap)
                if self._expiry.get(old) == expired:
                    del self._expiry[old]
            if token_id in self._expiry:
                return False
            if len(self._expiry) >= self.max_ids:
                log.warning("MemoryGuard full (%d live ids): refusing one-time state", self.max_ids)
                return False
            self._expiry[token_id] = expires_at
            heapq.heappush(self._heap, (expires_at, token_id))
            return True
