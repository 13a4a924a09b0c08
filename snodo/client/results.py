"""What a Client's calls return or raise, whichever era the server speaks.

Complete results are validated into the authoring revision's models (the typed API);
the fields an older server leaves out are filled the documented way
(``complete_result``). Which model that is, and which answers a result of another
revision is checked with, the registry says (``snodo.revisions``): no revision's
definition is named here. A paused MRTR flow is a ``Flow``. Errors are those of
``snodo.client.errors``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from snodo.client.errors import ProtocolViolation, RequestError, TooManyRounds
from snodo.core.errors import ErrorCode
from snodo.revisions import AUTHORING, REVISIONS, Revision

if TYPE_CHECKING:  # the typed API's class; what checks a result is the registry's
    from snodo.revisions.authoring import InputRequiredResult

__all__ = [
    "INPUT_REQUIRED",
    "INPUT_RESULTS",
    "RESULT_DEFAULTS",
    "RESULT_MODELS",
    "SPEC_DEFAULTS",
    "Flow",
    "InputHandler",
    "ProtocolViolation",
    "RequestError",
    "TooManyRounds",
    "complete_result",
    "fits_revision",
    "result_of",
    "validated",
    "with_defaults",
]

Model = TypeVar("Model", bound=BaseModel)

InputHandler = Callable[[dict[str, Any]], Awaitable[Any] | Any]
"""Gets the input request's params; returns the result (a dict or the generated model)."""


@dataclass(frozen=True, slots=True)
class Flow:
    """A paused MRTR flow (manual mode): everything needed to resume it anywhere."""

    method: str
    params: dict[str, Any]
    result: InputRequiredResult


_TYPED: Revision = REVISIONS.of(AUTHORING)
"""The revision whose models the client returns."""

RESULT_MODELS: dict[str, type[BaseModel]] = {
    method: spec.result for method, spec in _TYPED.methods.items() if spec.input_required
}
"""The result model of each method a flow may run (those that may ask for input)."""

INPUT_REQUIRED = cast("type[InputRequiredResult]", _TYPED.input_required_result)
"""The model a paused flow's result is read into (``Flow.result``): the authoring
revision's input-required result, by the name its overlay gives it."""

SPEC_DEFAULTS: dict[str, dict[str, Any]] = {
    "CallToolResult": {"isError": False},
    "ToolAnnotations": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    },
}
"""What the specification says an absent field means, in the prose of its descriptions
("assumed to be false", "Default: true"): the client fills these in, so that
``if result.is_error:`` and ``tool.annotations.destructive_hint`` read as the
specification means them. Other absent fields read as ``snodo.MISSING`` (pydantic's sentinel,
which is true): compare with ``is MISSING``.
tests/client/test_results.py finds each value in the pinned schema's words."""


def with_defaults(definition: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with the ``SPEC_DEFAULTS`` of ``definition`` (if any) filled in where absent."""
    return {**SPEC_DEFAULTS.get(definition, {}), **raw}


RESULT_DEFAULTS: dict[str, Any] = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
"""Filled in where a result leaves them out (a legacy server always does). resultType:
absent means "complete" (schema, Result.resultType). ttlMs: absent means 0, stale at
once (server/utilities/caching.mdx). cacheScope has no documented default: "private",
the reading that never shares a response across callers."""


def complete_result(model: type[Model], raw: Mapping[str, Any]) -> Model:
    """Validate a complete result into ``model``, filling the fields an older server
    leaves out (only those the model has)."""
    fields = {field.alias or name for name, field in model.model_fields.items()}
    filled = {k: v for k, v in RESULT_DEFAULTS.items() if k in fields and k not in raw}
    return validated(model, with_defaults(model.__name__, {**raw, **filled}))


def validated(model: type[Model], raw: Any) -> Model:
    """``raw`` as ``model``; a server's answer that does not fit is a ProtocolViolation,
    never pydantic's own error (nor a RecursionError from a deep one)."""
    try:
        return model.model_validate(raw)
    except (ValidationError, RecursionError) as exc:
        raise ProtocolViolation(f"not a valid {model.__name__}: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


INPUT_RESULTS: dict[str, type[BaseModel]] = {
    method: spec.result for method, spec in _TYPED.tables.INPUT_REQUESTS.items()
}
"""The answer model of each input request a server may make."""


def fits_revision(revision: Revision | None, method: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` when the negotiated revision's model of it accepts it, else
    ``ProtocolViolation``. The authoring revision's results are checked by the typed
    models the client returns (``complete_result``); another revision's are checked here
    with its own package first: a complete result with the method's result model, one
    that asks for input with the revision's input-required result (by the name its
    overlay gives it). A result of another kind (an extension's, such as a task) is
    the extension's to check."""
    if revision is None or revision.authoring:
        return result
    kind = result.get("resultType", "complete")
    spec = revision.methods.get(method)
    if kind == "input_required":
        model = revision.input_required_result
    elif kind == "complete":
        model = None if spec is None else spec.result
    else:
        return result
    if model is None:
        return result
    try:
        model.model_validate(result)
    except ValidationError as exc:
        raise ProtocolViolation(
            f"the {method} result does not fit revision {revision.version}: {exc}"
        ) from exc
    return result


def result_of(response: Mapping[str, Any]) -> dict[str, Any]:
    """The result of a response message, or its error raised as ``RequestError``."""
    error = response.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        raise RequestError(
            code if isinstance(code, int) else int(ErrorCode.INTERNAL_ERROR),
            str(error.get("message", "")),
            error.get("data"),
        )
    result = response.get("result")
    if not isinstance(result, dict):
        raise ProtocolViolation("a response without a result object")
    return result
