"""The caller's verified access token as a handler dependency.

``token: Token`` in a handler's parameters gives it the ``AccessToken`` the HTTP app
verified for this request (``snodo.auth``): its subject, client id, scopes as granted,
expiry and every claim, such as an email, a tenant or roles. None where there was none:
on stdio, in memory, and over HTTP without OAuth. ``Context.access_token`` holds the
same, untyped, since the core knows nothing of OAuth.
"""

from __future__ import annotations

from typing import Annotated

from snodo.auth.tokens import AccessToken
from snodo.core.context import Context
from snodo.server.dependencies import Depends

__all__ = ["Token", "access_token"]


def access_token(ctx: Context) -> AccessToken | None:
    """The request's verified token, or None without one."""
    token = ctx.access_token
    return token if isinstance(token, AccessToken) else None


Token = Annotated[AccessToken | None, Depends(access_token, inline=True)]
"""A handler parameter holding the request's verified token, or None."""
