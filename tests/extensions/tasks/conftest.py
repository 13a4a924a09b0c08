"""The session's redis-server, shared with the replay guards' tests."""

from tests.replay.conftest import redis_url

__all__ = ["redis_url"]
