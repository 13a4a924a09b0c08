"""OAuth for MCP servers over HTTP: a protected resource (RFC 9728) and token verifiers,
or the server as its clients' authorization server in front of an identity provider.

``ProtectedResource`` and the token types import nothing beyond the standard library.
The verifiers (``JwtVerifier``, ``IntrospectionVerifier``), ``OAuthProxy``,
``OIDCProxy``, the providers' presets (``GitHubProxy``, ``GoogleProxy``, ...),
``ProxyLimits``, ``DPoP``, ``IdentityAssertions``, ``FirstPartyClient`` and
``TokenExchange`` need the ``snodo[auth]`` extra, and are imported from here on first
use.

It may import ``snodo.stores`` only (where the OAuth proxy keeps its records, as every
store does); ``snodo.server`` and ``snodo.transports`` use it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from snodo.auth.protected import Authorized, ProtectedResource, Refused
from snodo.auth.tokens import AccessToken, InvalidToken, TokenVerifier, VerifierUnavailable

if TYPE_CHECKING:
    from snodo.auth.dpop import DPoP
    from snodo.auth.exchange import TokenExchange
    from snodo.auth.first_party import FirstPartyClient
    from snodo.auth.id_jag import IdentityAssertions
    from snodo.auth.introspection import IntrospectionVerifier
    from snodo.auth.jwt import JwtVerifier
    from snodo.auth.oidc import OIDCProxy
    from snodo.auth.presets import (
        Auth0Proxy,
        EntraProxy,
        GitHubProxy,
        GoogleProxy,
        KeycloakProxy,
        OktaProxy,
        WorkOSProxy,
    )
    from snodo.auth.proxy import OAuthProxy
    from snodo.auth.proxy_limits import ProxyLimits

_LAZY = {
    "IntrospectionVerifier": "snodo.auth.introspection",
    "JwtVerifier": "snodo.auth.jwt",
    "DPoP": "snodo.auth.dpop",
    "FirstPartyClient": "snodo.auth.first_party",
    "IdentityAssertions": "snodo.auth.id_jag",
    "TokenExchange": "snodo.auth.exchange",
    "OAuthProxy": "snodo.auth.proxy",
    "OIDCProxy": "snodo.auth.oidc",
    "ProxyLimits": "snodo.auth.proxy_limits",
    **{
        name: "snodo.auth.presets"
        for name in (
            "Auth0Proxy",
            "EntraProxy",
            "GitHubProxy",
            "GoogleProxy",
            "KeycloakProxy",
            "OktaProxy",
            "WorkOSProxy",
        )
    },
}
"""Names needing the extra: their modules are imported when first asked for."""

__all__ = [
    "AccessToken",
    "Auth0Proxy",
    "Authorized",
    "DPoP",
    "EntraProxy",
    "FirstPartyClient",
    "GitHubProxy",
    "GoogleProxy",
    "IdentityAssertions",
    "IntrospectionVerifier",
    "InvalidToken",
    "JwtVerifier",
    "KeycloakProxy",
    "OAuthProxy",
    "OIDCProxy",
    "OktaProxy",
    "ProtectedResource",
    "ProxyLimits",
    "Refused",
    "TokenExchange",
    "TokenVerifier",
    "VerifierUnavailable",
    "WorkOSProxy",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'snodo.auth' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
