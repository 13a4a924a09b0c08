"""A proxied server (``snodo run tests/auth_proxy/servers.py:server``) in front of the
loopback provider, and what the tests need to sign in through it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.auth.issuer import serving
from tests.auth_proxy.idp import Provider
from tests.support.processes import free_port, snodo_run
from tests.support.processes import serving as running


@dataclass
class Site:
    idp: Provider
    base: str

    @property
    def mcp(self) -> str:
        return self.base + "/mcp"


def proxied(store: str = "", base: str | None = None) -> Iterator[Site]:
    """The server and its provider; ``base``: another worker's address as issuer."""
    idp_port = free_port()
    idp = Provider(f"http://127.0.0.1:{idp_port}", "")
    sites: list[Site] = []

    def command(port: int) -> list[str]:
        site = Site(idp, base or f"http://127.0.0.1:{port}")
        sites.append(site)
        idp.callback = site.base + "/auth/callback"
        env = [f"TEST_IDP={idp.url}", f"TEST_BASE={site.base}", f"TEST_STORE={store}"]
        target = "tests/auth_proxy/servers.py:server"
        return ["env", *env, *snodo_run(target, "http", "--port", str(port))]

    with serving(idp, idp_port), running(command):
        yield sites[-1]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    yield from proxied()
