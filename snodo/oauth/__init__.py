"""OAuth 2.1 for MCP clients over HTTP: ``Client.http(url, auth=OAuth(...))``.

Needs the ``auth`` extra (authlib, httpx). See ``snodo.oauth.flow`` for how a request
gets its token, ``snodo.oauth.discovery`` for how the authorization server is found.

It imports no other snodo package.
"""

from snodo.oauth.assertion import ClientKey
from snodo.oauth.challenge import BearerChallenge, parse_challenge
from snodo.oauth.discovery import Discovery
from snodo.oauth.dpop import DPoPKey
from snodo.oauth.errors import OAuthError
from snodo.oauth.flow import OAuth
from snodo.oauth.jwt_bearer import AssertionSource, CrossAppAccess, WorkloadIdentity
from snodo.oauth.kept import KeptTokens
from snodo.oauth.storage import ClientInfo, MemoryTokenStorage, Tokens, TokenStorage
from snodo.oauth.user_agent import BrowserUserAgent, HeadlessUserAgent, UserAgent

__all__ = [
    "AssertionSource",
    "BearerChallenge",
    "BrowserUserAgent",
    "ClientInfo",
    "ClientKey",
    "CrossAppAccess",
    "DPoPKey",
    "Discovery",
    "HeadlessUserAgent",
    "KeptTokens",
    "MemoryTokenStorage",
    "OAuth",
    "OAuthError",
    "TokenStorage",
    "Tokens",
    "UserAgent",
    "WorkloadIdentity",
    "parse_challenge",
]
