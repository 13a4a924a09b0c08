"""OAuth for MCP servers over HTTP: a protected resource (RFC 9728) and token verifiers.

``ProtectedResource`` and the token types import nothing beyond the standard library.
The verifiers need the ``snodo[auth]`` extra; import them from their modules:
``snodo.auth.jwt.JwtVerifier`` and ``snodo.auth.introspection.IntrospectionVerifier``.

It imports no other snodo package; ``snodo.server`` and ``snodo.transports`` use it.
"""

from snodo.auth.protected import Authorized, ProtectedResource, Refused
from snodo.auth.tokens import AccessToken, InvalidToken, TokenVerifier, VerifierUnavailable

__all__ = [
    "AccessToken",
    "Authorized",
    "InvalidToken",
    "ProtectedResource",
    "Refused",
    "TokenVerifier",
    "VerifierUnavailable",
]
