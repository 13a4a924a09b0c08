"""One racer for the cross-process tests: ``python -m tests.replay.race STORE TARGET``.

It opens its own guard (``sqlite`` on a file path, ``redis`` on a URL) and prints
``ready``. Then, for each line on stdin (an id; the parent writes the same id to every
racer at once), it consumes that id and prints ``1`` if it won, ``0`` if not. It stops
at end of input.
"""

from __future__ import annotations

import asyncio
import sys
import time

from snodo.core.state.replay import ReplayGuard
from snodo.stores import RedisGuard, SQLiteGuard


async def race(store: str, target: str) -> None:
    expires = time.time() + 60
    guard: ReplayGuard
    if store == "sqlite":
        guard = sqlite = SQLiteGuard(target)
    else:
        guard = redis = RedisGuard(target)
        await redis.consume(f"warm-up-{time.time_ns()}", expires)  # connect before racing
    print("ready", flush=True)
    for line in sys.stdin:
        print(int(await guard.consume(line.strip(), expires)), flush=True)
    if store == "sqlite":
        sqlite.close()
    else:
        await redis.aclose()


if __name__ == "__main__":
    asyncio.run(race(sys.argv[1], sys.argv[2]))
