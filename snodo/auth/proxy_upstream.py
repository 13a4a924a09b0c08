"""The proxy's one call to the provider's token endpoint: its code for its tokens.

Apart from ``snodo.auth.proxy`` so that module stays about the flow; nothing of the
provider's answer is ever logged.
"""

from __future__ import annotations

import logging
import urllib.parse
from typing import Any

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.proxy_upstream needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.proxy_pages import OAuthRefusal

__all__ = ["exchange"]

log = logging.getLogger("snodo.auth")


async def exchange(
    http: httpx.AsyncClient,
    token_url: str,
    *,
    client_id: str,
    client_secret: str,
    token_auth: str,
    redirect_uri: str,
    code: str,
    verifier: str,
) -> dict[str, Any]:
    """The provider's tokens for its ``code`` (``access_denied`` when none come)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }
    auth = None
    if token_auth == "client_secret_basic":  # form-encoded first (RFC 6749 2.3.1)
        auth = httpx.BasicAuth(
            urllib.parse.quote_plus(client_id), urllib.parse.quote_plus(client_secret)
        )
    else:
        form.update(client_id=client_id, client_secret=client_secret)
    response = await http.post(
        token_url,
        data=form,
        auth=auth or httpx.USE_CLIENT_DEFAULT,
        headers={"accept": "application/json"},
    )
    if response.status_code != 200:
        log.warning("the identity provider's token endpoint answered %s", response.status_code)
        raise OAuthRefusal("access_denied", "no token from the identity provider")
    if response.headers.get("content-type", "").startswith("application/x-www-form"):
        answer: Any = dict(urllib.parse.parse_qsl(response.text))
    else:
        answer = response.json()
    if not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
        raise OAuthRefusal("access_denied", "the identity provider answered no access token")
    return answer
