"""Servers for the gateway's tool-variant tests (tests/gateway/test_tool_variants.py),
in process and as ``snodo run tests/gateway/variants_servers.py:NAME``:

- ``backend``: tools of each kind a variant covers, serving the versions
  ``VARIANTS_VERSIONS`` names (comma-separated; all three by default);
- ``front``: a proxy of the server at ``VARIANTS_BACKEND`` (a URL), serving
  ``VARIANTS_VERSIONS`` and speaking ``VARIANTS_BACKEND_VERSIONS`` to it, in the era
  ``VARIANTS_BACKEND_ERA`` (``auto`` by default).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel

from snodo.client import Client
from snodo.core.result import ToolError
from snodo.gateway import proxy
from snodo.server import Server, Spec

__all__ = ["ALL", "backend", "backend_server", "front"]

ALL = ("2026-12-01", "2026-07-28", "2025-11-25")


class Customers(BaseModel):
    names: list[str]


def backend_server(*versions: str, ran: list[str] | None = None) -> Server:
    """A server of three tools: an object output, a wrapped one, text only (which may
    fail); ``ran`` notes each call that reached a tool."""
    server = Server("crm", "1.0", versions=list(versions or ALL), spec=Spec(check_answers=True))

    @server.tool
    def find_customers(query: str) -> Customers:
        """Find customers by name."""
        if ran is not None:
            ran.append(query)
        if query == "fail":
            raise ToolError("nothing matches fail")
        return Customers(names=[f"{query} Retail"])

    @server.tool
    def regions() -> list[str]:
        """The sales regions."""
        return ["NA", "EMEA"]

    @server.tool
    def summarize(query: str) -> str:
        """Say what was found."""
        return f"I found 1 {query} customer record."

    return server


def _versions(variable: str) -> list[str]:
    given = os.environ.get(variable, "")
    return [version for version in given.split(",") if version] or list(ALL)


def _connect(**options: Any) -> Client:
    return Client.http(
        os.environ["VARIANTS_BACKEND"],
        versions=_versions("VARIANTS_BACKEND_VERSIONS"),
        era=os.environ.get("VARIANTS_BACKEND_ERA", "auto"),
        **options,
    )


backend = backend_server(*_versions("VARIANTS_VERSIONS"))
front = proxy(_connect, versions=_versions("VARIANTS_VERSIONS"), spec=Spec(check_answers=True))
