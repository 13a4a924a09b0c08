"""The proxy tests' fixtures: a proxied server before the loopback provider, and the
session's redis-server (shared with the replay guards' tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.auth_proxy.site import Site, proxied
from tests.replay.conftest import redis_url
from tests.support.idp import serve_provider

__all__ = ["redis_url"]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve_provider() as idp, proxied(idp) as found:
        yield found
