"""Reading the answer to an input request on the retry: one reader for every kind.

``snodo.elicitation``, ``snodo.sampling`` and ``snodo.roots`` each expose
``response(ctx, key, request)``, and all three behave alike:

1. ``request`` is required and must be a request of the module's kind (the one sent
   under ``key``; rebuild it the same way). Anything else is the handler's mistake and
   raises ``ValueError``, on every round, so it shows on the first one rather than only
   when an answer arrives.
2. No answer under ``key`` is ``MISSING``: ask (again) with ``input_required``.
3. An answer that is not the expected result is ``InvalidParams`` (-32602) with one
   message naming only the server's own key, never what was submitted: answers may hold
   personal data.

What each module checks beyond the shape (the form schema, the ``file://`` prefix of
roots, a non-empty sample) it does after ``read``, raising ``invalid`` the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from snodo.context import Context
from snodo.errors import InvalidParams
from snodo.result import MISSING, Missing

__all__ = ["check_request", "invalid", "read"]

M = TypeVar("M", bound=BaseModel)


def check_request(request: object, method: str) -> Mapping[str, Any]:
    """``request`` as a mapping, if it is a ``method`` request; else ``ValueError``."""
    if not isinstance(request, Mapping) or request.get("method") != method:
        raise ValueError(f"request: not a {method} request")
    return request


def invalid(kind: str, key: str) -> InvalidParams:
    """The one -32602 for a bad answer of ``kind`` (elicitation, sampling, roots)."""
    return InvalidParams(f"Invalid {kind} response for {key!r}")


def read(ctx: Context, key: str, model: type[M], kind: str) -> M | Missing:
    """The answer under ``key`` as ``model``, ``MISSING`` when none came."""
    if key not in ctx.input_responses:
        return MISSING
    try:
        return model.model_validate(ctx.input_responses[key], by_alias=True, by_name=False)
    except ValidationError:
        raise invalid(kind, key) from None
