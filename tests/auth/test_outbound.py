"""The HTTP client each verifier fetches keys and documents with: made once on first use
or given, and closed by the verifier's ``aclose`` either way."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from snodo.auth.discovery import OutboundClient
from snodo.auth.id_jag import IdentityAssertions
from snodo.auth.introspection import IntrospectionVerifier
from snodo.auth.jwt import JwtVerifier

ISSUER = "https://issuer.example"


def _verifiers(http: httpx.AsyncClient | None) -> list[Any]:
    return [
        JwtVerifier(ISSUER, "https://mcp.example", http=http),
        IntrospectionVerifier(ISSUER, "https://mcp.example", http=http),
        IdentityAssertions([ISSUER], http=http),
    ]


def test_a_client_is_made_once_on_first_use() -> None:
    outbound = OutboundClient()
    first = outbound()
    assert outbound() is first
    assert first.follow_redirects is False
    asyncio.run(outbound.aclose())
    assert first.is_closed


def test_closing_before_any_use_makes_no_client() -> None:
    outbound = OutboundClient()
    asyncio.run(outbound.aclose())
    assert outbound._http is None


@pytest.mark.parametrize("index", [0, 1, 2], ids=["jwt", "introspection", "id-jag"])
def test_each_verifier_closes_the_client_it_was_given(index: int) -> None:
    given = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(404)))
    verifier = _verifiers(given)[index]
    assert verifier._client() is given
    asyncio.run(verifier.aclose())
    assert given.is_closed
