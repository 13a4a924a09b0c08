"""Where state that outlives a request is kept: memory, an SQLite file, or Redis.

``sqlite`` opens the one shared SQLite file a host's workers use; ``redis`` checks a
Redis URL, connects and keeps a client per event loop; ``pubsub`` is the Redis pub/sub
link messages between workers ride on; ``replay`` holds the one-time-state guards built
on them. The other features that keep state across workers (tasks, legacy sessions, the
notification bus, the relays, the OAuth proxy) use the same helpers. This package may
import the core only.
"""

from snodo.core.state.replay import MemoryGuard, ReplayGuard
from snodo.stores.redis import RedisError
from snodo.stores.replay import RedisGuard, SQLiteGuard

__all__ = ["MemoryGuard", "RedisError", "RedisGuard", "ReplayGuard", "SQLiteGuard"]
