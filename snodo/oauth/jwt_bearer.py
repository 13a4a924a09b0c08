"""Assertions a client trades for a token with the ``jwt-bearer`` grant (RFC 7523):
a workload's identity token, and an enterprise identity provider's ID-JAG.

``OAuth(grant="jwt_bearer", client_id=..., assertion=...)`` asks the MCP server's
authorization server for a token with ``grant_type=urn:ietf:params:oauth:grant-type:
jwt-bearer`` and ``assertion=<JWT>``; where the JWT comes from is the ``assertion``:

- ``WorkloadIdentity``: workload identity federation. A platform gives each workload a
  short-lived signed identity token (a Kubernetes projected service account token, a
  CI job's OIDC token, a cloud instance's), in a file it rotates or an environment
  variable; the authorization server trusts the platform's issuer. The token is read
  afresh for every token request, so a rotated file is picked up. Nothing secret is
  configured in the client.
- ``CrossAppAccess``: enterprise-managed authorization (the ID-JAG of ext-auth). The
  user signed in to the client at the company's identity provider, which gave it an ID
  token; the client exchanges it there (RFC 8693 token exchange, requesting an
  ``id-jag``) for a grant naming this MCP server's authorization server (``audience``)
  and the MCP server (``resource``), and presents that grant. The provider's policy
  decides who may reach which server, and no browser is opened.

A refused grant is an ``OAuthError``; the client neither retries it nor falls back to
another grant.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlencode

try:
    import httpx
    from authlib.oauth2.auth import ClientAuth
except ImportError as exc:  # the base install: say which extra
    raise ImportError("snodo.oauth needs the snodo[auth] extra: pip install 'snodo[auth]'") from exc

from snodo.oauth.errors import OAuthError

__all__ = [
    "ID_JAG",
    "ID_TOKEN",
    "JWT_BEARER",
    "AssertionSource",
    "CrossAppAccess",
    "WorkloadIdentity",
    "bearer_grant",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
MAX_TOKEN_CHARS = 16 * 1024

Supplier = str | Callable[[], str | Awaitable[str]]
"""A token as it is, or a function (plain or async) that gives it when asked."""


async def _supplied(supplier: Supplier) -> str:
    found = supplier() if callable(supplier) else supplier
    value = await found if inspect.isawaitable(found) else found
    if not isinstance(value, str):
        raise OAuthError("the token supplier gave no string")
    return value


def _token(value: str, what: str) -> str:
    token = value.strip()
    if not token or len(token) > MAX_TOKEN_CHARS or any(c.isspace() for c in token):
        raise OAuthError(f"{what} is empty or not a token")
    return token


class AssertionSource(Protocol):
    """What gives ``OAuth(grant="jwt_bearer")`` its assertion for one token request."""

    async def assertion(
        self, http: httpx.AsyncClient, *, issuer: str, resource: str, scope: str | None
    ) -> str:
        """The JWT to present to the authorization server ``issuer`` for ``resource``."""
        ...


async def bearer_grant(
    source: AssertionSource,
    http: httpx.AsyncClient,
    issuer: str,
    resource: str,
    scope: str | None,
) -> str:
    """The body of a ``jwt-bearer`` token request (RFC 7523 section 2.1), with the
    RFC 8707 ``resource``, presenting what ``source`` gives."""
    assertion = await source.assertion(http, issuer=issuer, resource=resource, scope=scope)
    form = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": resource}
    if scope:
        form["scope"] = scope
    return urlencode(form)


class WorkloadIdentity:
    """The workload's identity token, from one of: ``file`` (read for each request),
    ``env`` (an environment variable's name) or ``token`` (a function giving it)."""

    def __init__(
        self,
        *,
        file: str | os.PathLike[str] | None = None,
        env: str | None = None,
        token: Callable[[], str | Awaitable[str]] | None = None,
    ) -> None:
        if sum(x is not None for x in (file, env, token)) != 1:
            raise ValueError("give one of file=, env= or token=")
        self.file = None if file is None else Path(file)
        self.env = env
        self.token = token

    async def assertion(
        self, http: httpx.AsyncClient, *, issuer: str, resource: str, scope: str | None
    ) -> str:
        """The workload's token as it is now (the platform renews it)."""
        if self.file is not None:
            try:
                text = self.file.read_text(encoding="ascii")
            except (OSError, UnicodeError) as exc:
                raise OAuthError(f"cannot read the workload token {self.file}: {exc}") from None
            return _token(text, f"the workload token in {self.file}")
        if self.env is not None:
            value = os.environ.get(self.env)
            if value is None:
                raise OAuthError(f"the environment has no {self.env}")
            return _token(value, f"${self.env}")
        assert self.token is not None
        return _token(await _supplied(self.token), "the workload token")


class CrossAppAccess:
    """An ID-JAG from the enterprise identity provider, by token exchange (RFC 8693).

    ``token_endpoint`` is the provider's; ``id_token`` the ID token the user's sign-in
    at the provider gave the client (or a function giving the current one);
    ``client_id`` (and ``client_secret``, sent as ``auth_method`` says) the client's
    registration at the provider. ``subject_token_type`` names what ``id_token`` is
    (an OpenID ID token by default; ``...:saml2`` for a SAML assertion).
    """

    def __init__(
        self,
        *,
        token_endpoint: str,
        id_token: Supplier,
        client_id: str,
        client_secret: str | None = None,
        auth_method: Literal["client_secret_basic", "client_secret_post", "none"] | None = None,
        subject_token_type: str = ID_TOKEN,
    ) -> None:
        self.token_endpoint = token_endpoint
        self.id_token = id_token
        self.client_id = client_id
        self.client_secret = client_secret
        self.auth_method = auth_method or ("client_secret_post" if client_secret else "none")
        if self.auth_method != "none" and not client_secret:
            raise ValueError(f"{self.auth_method} needs client_secret")
        self.subject_token_type = subject_token_type

    async def assertion(
        self, http: httpx.AsyncClient, *, issuer: str, resource: str, scope: str | None
    ) -> str:
        """A new ID-JAG for ``issuer`` (its ``aud``) and ``resource``, exchanged at the
        provider for the user's ID token; ``OAuthError`` when the provider refuses."""
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "audience": issuer,
            "resource": resource,
            "subject_token": _token(await _supplied(self.id_token), "the ID token"),
            "subject_token_type": self.subject_token_type,
        }
        if scope:
            form["scope"] = scope
        headers = {
            "content-type": "application/x-www-form-urlencoded",
            "accept": "application/json",
        }
        auth = ClientAuth(self.client_id, self.client_secret, self.auth_method)
        uri, headers, body = auth.prepare("POST", self.token_endpoint, headers, urlencode(form))
        response = await http.post(uri, content=body, headers=headers)
        try:
            data: Any = response.json()
        except ValueError:
            data = None
        if response.status_code != 200 or not isinstance(data, dict):
            error = data.get("error") if isinstance(data, dict) else None
            raise OAuthError(
                f"the identity provider refused the token exchange: {response.status_code} "
                f"{error or ''}".rstrip()
            )
        if data.get("issued_token_type") != ID_JAG:
            raise OAuthError("the identity provider issued no ID-JAG")
        grant = data.get("access_token")
        if not isinstance(grant, str):
            raise OAuthError("the token exchange answer has no access_token")
        return _token(grant, "the ID-JAG")
