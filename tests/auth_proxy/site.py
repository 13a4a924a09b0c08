"""A proxied server (``snodo run tests/auth_proxy/servers.py:server``) in front of the
loopback provider of tests/support/idp.py, which has no registration endpoint."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tests.support.idp import Provider
from tests.support.processes import serving as running
from tests.support.processes import snodo_run


@dataclass
class Site:
    idp: Provider
    base: str
    """The issuer: this worker's address, or the worker's whose issuer it shares."""
    address: str
    """Where this worker listens."""

    @property
    def mcp(self) -> str:
        return self.base + "/mcp"


@contextlib.contextmanager
def proxied(
    idp: Provider,
    store: str = "",
    base: str | None = None,
    per_address: int | None = None,
    *,
    loopback_documents: bool = True,
    limits: Mapping[str, Any] | None = None,
    access_lifetime: float | None = None,
) -> Iterator[Site]:
    """The server before ``idp``; ``base``: the address of the worker whose issuer it
    shares, else its own; ``per_address``: registrations one address may make;
    ``loopback_documents``: the development setting that lets the tests' loopback
    document server be fetched from; ``limits``: more ``ProxyLimits`` fields;
    ``access_lifetime``: seconds its access tokens live."""
    sites: list[Site] = []

    def command(port: int) -> list[str]:
        address = f"http://127.0.0.1:{port}"
        site = Site(idp, base or address, address)
        sites.append(site)
        idp.add_client(redirect_uris=[site.base + "/auth/callback"])
        env = [f"TEST_IDP={idp.url}", f"TEST_BASE={site.base}", f"TEST_STORE={store}"]
        env.append(f"TEST_REGISTRATIONS_PER_ADDRESS={per_address or ''}")
        env.append(f"TEST_LOOPBACK_DOCUMENTS={int(loopback_documents)}")
        env.append(f"TEST_LIMITS={json.dumps(dict(limits or {}))}")
        env.append(f"TEST_ACCESS_LIFETIME={access_lifetime or ''}")
        target = "tests/auth_proxy/servers.py:server"
        return ["env", *env, *snodo_run(target, "http", "--port", str(port))]

    with running(command):
        yield sites[-1]
