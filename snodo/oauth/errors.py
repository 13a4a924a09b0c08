"""The one error the OAuth client raises: authorization could not be obtained."""

from __future__ import annotations

__all__ = ["OAuthError"]


class OAuthError(Exception):
    """Authorization failed: discovery, registration, the redirect or the token
    endpoint did not give what the flow needs, or a check on what they gave failed."""
