"""Reading the answer to an input request on the retry: one reader for every kind.

``snodo.asking.elicitation``, ``snodo.asking.sampling`` and ``snodo.asking.roots`` each expose
``response(ctx, key, request)``, and all three behave alike:

1. ``request`` is required and must be a request of the module's kind (the one sent
   under ``key``; rebuild it the same way). Anything else is the handler's mistake and
   raises ``ValueError``, on every round, so it shows on the first one rather than only
   when an answer arrives.
2. No answer under ``key`` is ``MISSING``: ask (again) with ``input_required``.
3. An answer that is not the expected result is ``InvalidParams`` (-32602) with one
   message naming only the server's own key, never what was submitted: answers may hold
   personal data.
4. An answer counts only to a question this flow asked: when a handler asks, the server
   seals into the request state a digest of each question by key (``pin``), and on the
   retry an answer under a key that was not asked, or whose question has changed since,
   is ``MISSING`` too, as is every answer of a request that carries no state. A client
   cannot pre-answer a question (a confirmation, say) the server never put to the user
   (basic/patterns/mrtr.mdx: ignore response data not recognised or needed).

What each module checks beyond the shape (the form schema, the ``file://`` prefix of
roots, a non-empty sample) it does after ``read``, raising ``invalid`` the same way.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from snodo.core.context import Context
from snodo.core.errors import InvalidParams
from snodo.core.input_requests import BuiltRequest
from snodo.core.plain_params import plain_call_params
from snodo.core.result import MISSING
from snodo.revisions import Revision
from snodo.revisions.authoring import (
    CallToolRequestParams,
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    adapters,
)

__all__ = [
    "check_params",
    "check_request",
    "check_responses",
    "invalid",
    "params_error",
    "pin",
    "plain_elicit_result",
    "question_digest",
    "read",
    "was_asked",
]

M = TypeVar("M", bound=BaseModel)


def check_request(request: object, method: str) -> Mapping[str, Any]:
    """``request`` as a mapping, if it is a ``method`` request; else ``ValueError``."""
    if not isinstance(request, Mapping) or request.get("method") != method:
        raise ValueError(f"request: not a {method} request")
    return request


def question_digest(request: Mapping[str, Any]) -> str:
    """A short digest of an input request: 128 bits of SHA-256 over its JSON with sorted
    keys, base64url. The same question digests the same on every worker of a server."""
    if isinstance(request, BuiltRequest) and request.digest is not None:
        return request.digest
    try:
        text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return ""  # not JSON: it cannot have been sent, so nothing answers it
    raw = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]
    digest = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    if isinstance(request, BuiltRequest):
        request.digest = digest
    return digest


def pin(
    earlier: Mapping[str, str] | None, requests: Mapping[str, Mapping[str, Any]]
) -> dict[str, str]:
    """The questions a flow has asked so far, by key: ``earlier`` rounds' and these."""
    asked = dict(earlier) if earlier else {}
    for key, request in requests.items():
        asked[key] = question_digest(request)
    return asked


def was_asked(ctx: Context, key: str, request: Mapping[str, Any]) -> bool:
    """Whether this flow put ``request`` under ``key`` to the client in an earlier round
    (always, in a context built by hand: ``Context.asked``)."""
    asked = ctx.asked
    if asked is None:
        return True
    pinned = asked.get(key)
    return pinned is not None and pinned == question_digest(request)


def invalid(kind: str, key: str) -> InvalidParams:
    """The one -32602 for a bad answer of ``kind`` (elicitation, sampling, roots)."""
    return InvalidParams(f"Invalid {kind} response for {key!r}")


def read(
    ctx: Context, key: str, request: Mapping[str, Any], model: type[M], kind: str
) -> M | MISSING:
    """The answer under ``key`` to ``request`` as ``model``; ``MISSING`` when none came,
    or when this flow did not ask ``request`` under ``key``."""
    if key not in ctx.input_responses or not was_asked(ctx, key, request):
        return MISSING
    raw = ctx.input_responses[key]
    revision = ctx.revision
    if revision is not None and not revision.authoring:
        # Another revision's answer is read with its own model of the request's answer
        # (the handler's typed access holds where the revisions agree).
        spec = revision.tables.INPUT_REQUESTS.get(request.get("method"))
        if spec is None:
            raise invalid(kind, key)
        model = spec.result
    checked = ctx.checked_answers.get(key) if ctx.checked_answers else None
    if checked is not None and checked[0] is raw and type(checked[1]) is model:
        return checked[1]  # the same raw answer, validated by check_responses
    try:
        return model.model_validate(raw, by_alias=True, by_name=False)
    except ValidationError:
        raise invalid(kind, key) from None


def params_error(exc: ValidationError, prefix: str = "") -> str:
    """Where and why params failed, never the submitted values."""
    first = exc.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(step) for step in ([prefix] if prefix else []) + list(first["loc"]))
    return (
        f"Invalid params: {where}: {first['msg']}" if where else f"Invalid params: {first['msg']}"
    )


_ACTIONS = frozenset(("accept", "cancel", "decline"))


def plain_elicit_result(answer: Any) -> bool:
    """True only for an answer ``ElicitResult`` accepts and reads back unchanged: a known
    action, and content (if any) an object of strings, integers, floats, booleans and
    lists of strings, each of exactly that type. Other keys are extras the model keeps
    unread. Like ``snodo.core.plain_params`` it never refuses: anything else goes to the model.
    """
    if type(answer) is not dict:
        return False
    action = answer.get("action")
    if type(action) is not str or action not in _ACTIONS:
        return False
    if "content" not in answer:  # URL mode, or a decline
        return True
    content = answer["content"]
    if type(content) is not dict:
        return False
    for name, value in content.items():
        kind = type(value)
        if type(name) is not str:
            return False
        if kind is list:
            for item in value:
                if type(item) is not str:
                    return False
        elif kind is not str and kind is not int and kind is not float and kind is not bool:
            return False
    return True


_ELICIT, _ROOTS, _SAMPLE = "elicitation/create", "roots/list", "sampling/createMessage"


def _likely(
    answer: dict[str, Any], answers: Mapping[str, Any] | None = None
) -> type[BaseModel] | None:
    """The answer kind a required key points to; without one, most likely sampling.
    ``answers``: another revision's input requests (its ``INPUT_REQUESTS``), whose
    answer models are read from there (None: that revision has no such request)."""
    method = _ELICIT if "action" in answer else _ROOTS if "roots" in answer else _SAMPLE
    if answers is not None:
        spec = answers.get(method)
        return None if spec is None else spec.result
    if "action" in answer:
        return ElicitResult
    return ListRootsResult if "roots" in answer else CreateMessageResult


def _aliased(annotation: Any, seen: set[type] | None = None) -> bool:
    """Whether a model in ``annotation``, at any depth, has a field with an alias."""
    seen = set() if seen is None else seen
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return False
        seen.add(annotation)
        return any(
            f.alias or f.validation_alias or _aliased(f.annotation, seen)
            for f in annotation.model_fields.values()
        )
    return any(_aliased(arg, seen) for arg in get_args(annotation))


_REUSABLE = frozenset(
    m for m in (ElicitResult, ListRootsResult, CreateMessageResult) if not _aliased(m)
)
"""Answer models with no aliased field, nested ones included: validating by name as
well as by alias (as the check does) and by alias only (as ``read`` does) gives them
the same model, so ``read`` may reuse the check's."""


def check_responses(
    responses: Any, revision: Revision | None = None
) -> dict[str, tuple[Any, BaseModel]]:
    """The retry's inputResponses, each a valid InputResponse of ``revision`` (the
    request's; None or the authoring one: ``snodo_wire``'s); as the generated union
    decides, but trying first the branch the answer's keys point to (the union is
    untagged, and trying all three costs several times more). A plain elicitation answer
    (``plain_elicit_result``) needs no model: ``snodo.asking.elicitation`` reads it as plainly.
    Returns, by key, the answers whose model ``read`` may reuse (see
    ``Context.checked_answers``; only the authoring revision's)."""
    if not isinstance(responses, dict):
        raise InvalidParams("Invalid params: inputResponses: must be an object")
    other = revision is not None and not revision.authoring
    answers = revision.tables.INPUT_REQUESTS if other and revision is not None else None
    checked: dict[str, tuple[Any, BaseModel]] = {}
    for key, answer in responses.items():
        if type(answer) is dict:
            likely = _likely(answer, answers)
            if likely is ElicitResult and plain_elicit_result(answer):
                continue  # valid; ``snodo.asking.elicitation`` reads it as plainly
            try:
                if likely is not None:
                    model = likely.model_validate(answer)
                    if likely in _REUSABLE:
                        checked[key] = (answer, model)
                    continue
            except ValidationError:
                pass
        adapter = revision.adapters.input_response if other and revision is not None else None
        try:
            (adapters.input_response if adapter is None else adapter).validate_python(answer)
        except ValidationError as exc:
            raise InvalidParams(params_error(exc, f"inputResponses.{key}")) from exc
    return checked


def check_params(
    model: type[BaseModel],
    params: Mapping[str, Any],
    input_required: bool,
    revision: Revision | None = None,
) -> dict[str, tuple[Any, BaseModel]]:
    """``params`` against the method's ``model`` (``revision``'s); on a retry
    (``input_required``), its inputResponses first, each as ``check_responses`` does
    with the same revision, and what that returns."""
    responses = params.get("inputResponses")
    checked: dict[str, tuple[Any, BaseModel]] = {}
    # tools/call, the hot method: plain params need no model (snodo.core.plain_params).
    plain = model is CallToolRequestParams
    try:
        if responses is not None and input_required:
            checked = check_responses(responses, revision)
            if not (plain and plain_call_params(params, answers_checked=True)):
                model.model_validate({**params, "inputResponses": {}})
        elif not (plain and plain_call_params(params)):
            model.model_validate(params)
    except ValidationError as exc:
        raise InvalidParams(params_error(exc)) from exc
    return checked
