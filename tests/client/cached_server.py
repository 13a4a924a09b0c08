"""A server whose lists and reads carry caching hints, for the client's cache tests:
lists public for a minute, reads private for a minute, one read public. Every read
answers how many times that resource has been read, so a cached answer shows.

    snodo run tests.client.cached_server:server --transport http --port PORT
"""

from __future__ import annotations

from collections import Counter

from snodo.server import CacheHint, Caching, Server

server = Server(
    "cached",
    "1.0",
    caching=Caching(lists=CacheHint(60_000, "public"), read=CacheHint(60_000, "private")),
)
reads: Counter[str] = Counter()


@server.resource("count://mine", mime_type="text/plain")
def mine() -> str:
    """Private: a read per principal."""
    reads["count://mine"] += 1
    return str(reads["count://mine"])


@server.resource("count://shared", mime_type="text/plain", cache=CacheHint(60_000, "public"))
def shared() -> str:
    """Public: one read serves everyone sharing a cache."""
    reads["count://shared"] += 1
    return str(reads["count://shared"])


@server.tool
def add_tool(name: str) -> str:
    """Register a tool named ``name``: the tool list changes (and says so)."""

    def added() -> str:
        return name

    server.tool(name=name)(added)
    return name


@server.tool
def touch(uri: str) -> int:
    """Tell the listen streams watching ``uri`` that it changed."""
    return server.notify_resource_updated(uri)
