"""Ask the user for input through the client: ``elicitation/create`` input requests.

A handler builds a request with :func:`form` or :func:`url`, returns it through
``snodo.core.result.input_required``, and on the retry reads the answer with
:func:`response`. Nothing waits in between (basic/patterns/mrtr.mdx).

Form mode puts every answer through the client, so it MUST NOT collect secrets:
passwords, API keys, access tokens or payment credentials go through URL mode, where
the user deals with the server directly (client/elicitation.mdx, "Security").

Errors split the h11 way: a request the handler built wrong raises ``ValueError`` at
build time, naming the offending path; an answer the client sent wrong raises
``InvalidParams`` (-32602) whose message never repeats what was submitted.

Form answers are checked against the requested schema (client/elicitation.mdx: servers
SHOULD validate received data) by ``snodo.asking.form_schema``, which also compiles the schema
when the form is built:

- every ``required`` property is present; properties not in the schema are dropped, as
  the spec asks of data a server does not recognise (basic/patterns/mrtr.mdx, "Error
  Handling"), so a handler only ever sees checked values;
- types are exact: ``true`` is not an integer, ``3.0`` is not an integer (snodo never
  changes a number's type silently), a ``number`` takes any finite int or float;
- ``minLength``/``maxLength`` count code points, ``minimum``/``maximum`` are inclusive;
- single-select values must be one of the options; multi-select answers are lists of
  distinct options whose length respects ``minItems``/``maxItems`` (a selection is a
  set, so a repeated option cannot satisfy ``minItems``);
- formats are syntactic checks only, not deliverability or reachability:
  ``email`` is ``local@domain`` with one ``@``, a non-empty local part, a domain of
  non-empty dot-separated labels, no whitespace or control characters; ``uri`` is an
  absolute URI: a scheme, ``:``, then one or more RFC 3986 characters with well-formed
  percent escapes; ``date`` is ``YYYY-MM-DD`` naming a real calendar date (years
  0001-9999); ``date-time`` is RFC 3339 ``date "T" time offset`` (``T``/``Z`` in either
  case, optional fraction, seconds up to 60 for a leap second, offset ``Z`` or
  ``+HH:MM``/``-HH:MM``).

Optional properties the user left out stay out: defaults are for the client to
pre-populate the form, not for the server to fill in.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeAlias, TypeVar
from urllib.parse import urlsplit

from pydantic import ValidationError

from snodo.asking.form_schema import (
    FORMATS,
    CheckedSchema,
    FormValue,
    RejectedValueError,
    check_content,
    check_schema,
)
from snodo.asking.typed_forms import form_model, is_form_model
from snodo.core import input_responses as answers
from snodo.core.context import Context
from snodo.core.input_requests import BuiltRequest
from snodo.core.result import MISSING
from snodo.revisions.authoring import adapters
from snodo.revisions.authoring.models import ElicitResult

__all__ = [
    "FORMATS",
    "Accepted",
    "Cancelled",
    "Declined",
    "ElicitationResponse",
    "FormValue",
    "form",
    "response",
    "url",
]

METHOD = "elicitation/create"
KIND = "elicitation"


C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class Accepted(Generic[C]):
    """The user submitted the form, or consented to open the URL.

    ``content`` is the checked answer: a mapping of the form's fields, or an instance of
    the model the form was built from. For URL mode it is always empty: accepting means
    the user agreed to go to the URL, not that whatever happens there is done
    (client/elicitation.mdx). Check completion yourself, e.g. against state you keep for
    the flow.
    """

    content: C = field(default_factory=dict)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Declined:
    """The user explicitly refused."""


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The user dismissed the request without choosing (not a protocol cancellation)."""


ElicitationResponse: TypeAlias = Accepted[Any] | Declined | Cancelled
"""What ``response`` reads when the user answered: accepted (with the content), declined
or cancelled."""


# --- building ------------------------------------------------------------------------


def form(message: str, schema: Mapping[str, Any] | type) -> BuiltRequest:
    """A bare form-mode ``elicitation/create`` request.

    ``schema`` is the spec's restricted flat subset (client/elicitation.mdx, "Requested
    Schema"), or a pydantic model or dataclass compiled to it (``snodo.asking.typed_forms``),
    whose instance an accepted answer then is. Any other keyword, nesting or mistyped
    value raises ``ValueError``. The request carries ``"mode": "form"`` explicitly, as
    the spec's own examples do, though clients treat an absent mode as form.
    """
    _check_message(message)
    if is_form_model(schema):
        compiled = form_model(typing.cast(type, schema))
        checked = replace(check_schema(compiled.schema), model=compiled)
    else:
        checked = check_schema(schema)  # ValueError naming what is wrong
    request = {
        "method": METHOD,
        "params": {"mode": "form", "message": message, "requestedSchema": checked.schema},
    }
    _check_wire(request)
    return BuiltRequest(request, checked)


def url(message: str, url: str) -> BuiltRequest:
    """A bare URL-mode ``elicitation/create`` request: the user opens ``url`` themselves.

    Only absolute ``http``/``https`` URLs in ASCII (percent-encode paths, punycode
    hosts) are accepted. A URL carrying userinfo (``user:pass@host``) is refused: the
    server MUST NOT put credentials in it (client/elicitation.mdx, "Safe URL
    Handling"), and ``https://trusted@evil`` is a classic phishing shape. Keep any
    per-user secret out of the URL; bind the flow to the user server-side instead.
    """
    _check_message(message)
    _check_navigation_url(url)
    request = {"method": METHOD, "params": {"mode": "url", "message": message, "url": url}}
    _check_wire(request)
    return BuiltRequest(request)


def _check_message(message: object) -> None:
    if not isinstance(message, str) or not message:
        raise ValueError("message: must be a non-empty string")


_URL_CHARS = re.compile(r"[!-~]+")  # printable ASCII, no space


def _check_navigation_url(value: object) -> None:
    if not isinstance(value, str) or not _URL_CHARS.fullmatch(value):
        raise ValueError("url: must be a non-empty ASCII URL without whitespace")
    try:
        parts = urlsplit(value)
        _ = parts.port  # parses the port, raising ValueError when it is malformed
    except ValueError:
        raise ValueError("url: not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError("url: only absolute http and https URLs are allowed")
    if "@" in parts.netloc:
        raise ValueError("url: must not carry userinfo (credentials) before the host")
    if not parts.hostname:
        raise ValueError("url: must name a host")


def _check_wire(request: dict[str, Any]) -> None:
    """Cross-check with the generated model; the checks above are stricter, so a failure
    here is a bug in this module rather than in the caller's input."""
    try:
        adapters.input_request.validate_python(request, by_alias=True, by_name=False)
    except ValidationError as exc:  # pragma: no cover - guarded by the checks above
        raise ValueError(f"request does not match the schema: {exc}") from None


# --- reading answers -----------------------------------------------------------------


def response(ctx: Context, key: str, request: Mapping[str, Any]) -> ElicitationResponse | MISSING:
    """The user's answer to ``request`` under ``key``, checked; ``MISSING`` if none came.

    Reads as ``snodo.core.input_responses`` describes for every kind of answer. On ``MISSING``, ask
    (again) with ``input_required``: the spec prefers re-requesting over an error
    (basic/patterns/mrtr.mdx, "Error Handling"). A form answer must also satisfy the
    requested schema, else ``InvalidParams``.
    """
    if isinstance(request, BuiltRequest) and request["method"] == METHOD:
        checked = request.checked  # checked when built, as most requests are
    else:
        checked = _requested(request)
    raw = ctx.input_responses.get(key)
    revision = ctx.revision
    # A plain answer reads alike with the authoring revision's model; another
    # revision's answer is read with its own (``answers.read``).
    authoring = revision is None or revision.authoring
    if raw is not None and authoring and answers.plain_elicit_result(raw):
        if not answers.was_asked(ctx, key, request):
            return MISSING
        action, given = raw["action"], raw.get("content")  # what the model would read
    else:
        answer = answers.read(ctx, key, request, ElicitResult, KIND)
        if answer is MISSING:
            return MISSING
        action, given = answer.action, answer.content
    if action == "decline":
        return Declined()
    if action == "cancel":
        return Cancelled()
    if checked is None:
        return Accepted({})  # URL mode: consent only; any content is ignored
    content = given if isinstance(given, dict) else {}
    try:
        values = check_content(checked, content)
        if checked.model is not None:
            return Accepted(checked.model.instance(values))
        return Accepted(values)
    except (RejectedValueError, ValueError):
        raise answers.invalid(KIND, key) from None


def _requested(request: Mapping[str, Any]) -> CheckedSchema | None:
    """The checked schema of a form request, None for a URL request."""
    if isinstance(request, BuiltRequest) and request["method"] == METHOD:
        return request.checked  # type: ignore[no-any-return]  # checked when built
    params = answers.check_request(request, METHOD).get("params")
    if not isinstance(params, Mapping):
        raise ValueError("request.params: must be an object")
    mode = params.get("mode", "form")
    if mode == "url":
        return None
    if mode != "form":
        raise ValueError("request.params.mode: must be 'form' or 'url'")
    return check_schema(params.get("requestedSchema"))
