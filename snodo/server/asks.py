"""Declarative asks: a handler parameter the user (or the client) answers, not the caller.

``city: Annotated[str | None, Ask(CITY, pick="city")]`` makes ``city`` the answer to
the form ``CITY``. Before the handler runs, every asked parameter is read from the
request's answers; when any is unanswered the server answers ``input_required`` with
all the unanswered questions at once (one round for a client that can answer them all;
admission checks the client's capabilities for all of them together, as for any
``input_required``), and the handler runs once, on the retry that answers the last.

Answers of earlier rounds are carried in the sealed request state, so a client that
answers some questions now and the rest later is asked only for the rest. Each answer
counts only for the question it answered: the server pins a digest of every question it
asks (``snodo.core.input_responses``), so a question that changed since (one built from the call's
arguments, say) is asked again, and an answer to a question never asked is ignored.

What the parameter receives, by the question's kind (the annotation decides):

- a form (``elicitation.form``): the accepted content, as a ``dict`` (an instance of
  the model, for a form built from one), or with ``pick="field"`` that one field's
  value; ``None`` when the user declined or cancelled, or left an optional ``pick``
  field empty. So the annotation must admit ``None``, unless it takes the response
  itself (``elicitation.ElicitationResponse``: ``Accepted``, ``Declined`` or
  ``Cancelled``), which is also what a URL question (``elicitation.url``) gives.
- a sample (``sampling.create_message``): its text (``sampling.text``), or the whole
  ``CreateMessageResult`` when annotated so.
- roots (``roots.list_roots``): the list of ``Root``, or the whole ``ListRootsResult``.

A question may depend on the call: ``Ask(fn)`` calls ``fn(arguments)`` (the caller's
arguments, checked) on every round for the request to ask. As it could build a form,
its parameter must admit ``None`` (or take the response) whatever it builds.

The explicit style (``elicitation.response`` and ``input_required`` in the handler)
stays the lower level; a handler may use both, with keys of its own. Legacy sessions
get the same questions as requests of the server's, through the bridge.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from snodo.asking import elicitation, roots, sampling
from snodo.core.context import Context, refilled
from snodo.core.result import MISSING, NO_STATE, InputRequired, mark_taken
from snodo.core.state.sealing import UNKNOWN, Sealer

__all__ = [
    "Answered",
    "Ask",
    "Question",
    "answer_questions",
    "ask_of",
    "carried_forward",
    "carried_state",
    "question",
]

CARRIED = "snodo/asks"
"""The key, in a flow's sealed state, of the answers its asked parameters were given."""

Request = Mapping[str, Any]
RequestFor = Callable[[Mapping[str, Any]], Request]

_READERS: dict[str, Callable[[Context, str, Request], Any]] = {
    elicitation.METHOD: elicitation.response,
    sampling.METHOD: sampling.response,
    roots.METHOD: roots.response,
}
_RESPONSES: tuple[type, ...] = (
    elicitation.Accepted,
    elicitation.Declined,
    elicitation.Cancelled,
    sampling.CreateMessageResult,
    roots.ListRootsResult,
)
"""What each input module's ``response`` reads, as a handler annotates it: a parameter
of one of these types takes the response itself."""


@dataclass(frozen=True, slots=True)
class Ask:
    """``Annotated[T, Ask(request)]``: the parameter is the answer to ``request``.

    ``request`` is an input request built with ``snodo.asking.elicitation``,
    ``snodo.asking.sampling`` or ``snodo.asking.roots``, or a function of the call's
    arguments that builds one. ``pick`` names the form field the parameter takes (else it
    takes the whole content); ``key`` is the input request's key (else the parameter's
    name).
    """

    request: Request | RequestFor
    pick: str | None = None
    key: str | None = None

    def __post_init__(self) -> None:
        if not callable(self.request) and not isinstance(self.request, Mapping):
            raise TypeError("Ask takes an input request, or a function that builds one")
        if self.pick is not None and (not isinstance(self.pick, str) or not self.pick):
            raise TypeError("pick must name a form field")
        if self.key is not None and (not isinstance(self.key, str) or not self.key):
            raise TypeError("key must be a non-empty string")


@dataclass(frozen=True, slots=True)
class Question:
    """An asked parameter, checked at registration."""

    param: str
    key: str
    request: Request | None
    """The request, when it is the same on every call."""
    build: RequestFor | None
    """Else the function that builds it from the arguments."""
    pick: str | None
    whole: bool
    """The parameter takes the response object itself."""
    typed: tuple[type, ...] = ()
    """The response types the annotation names (for ``whole``)."""

    def asked(self, arguments: Mapping[str, Any]) -> Request:
        """The request to ask on this call (built anew from ``arguments`` if it depends
        on them)."""
        if self.request is not None:
            return self.request
        assert self.build is not None
        built = self.build(arguments)
        _check(built, self.param, self.pick)
        return built

    def value(self, answer: Any, method: str) -> Any:
        """What the parameter receives for ``answer``, the response ``method``'s module
        read. The answer is of the request's revision (``ctx.revision``): what a
        parameter takes is read by the question's kind, never by the answer's class."""
        if self.whole:
            return _as_annotated(answer, self.typed)
        if method == sampling.METHOD:
            return sampling.text(answer)
        if method == roots.METHOD:
            return list(answer.roots)
        if isinstance(answer, elicitation.Accepted):
            content = answer.content
            if not isinstance(content, Mapping):  # an instance of the form's model
                return getattr(content, self.pick) if self.pick is not None else content
            return content.get(self.pick) if self.pick is not None else dict(content)
        return None  # declined or cancelled


def _as_annotated(answer: Any, typed: tuple[type, ...]) -> Any:
    """A whole response as the type the handler annotated: another revision's model of
    the same name is read into it, where the two agree."""
    if not typed or isinstance(answer, typed):
        return answer
    for kind in typed:
        if issubclass(kind, BaseModel) and kind.__name__ == type(answer).__name__:
            return kind.model_validate(answer.model_dump(mode="json", by_alias=True))
    return answer


def ask_of(annotation: Any) -> Ask | None:
    """The ``Ask`` in an ``Annotated`` annotation, if there is one."""
    for extra in getattr(annotation, "__metadata__", ()):
        if isinstance(extra, Ask):
            return extra
    return None


def question(param: str, annotation: Any, ask: Ask) -> Question:
    """``ask`` for the parameter ``param``, checked: TypeError or ValueError naming it
    when the request is not one it can ask or the annotation cannot take an answer."""
    inner = getattr(annotation, "__origin__", annotation)  # Annotated[T, ...] -> T
    members = typing.get_args(inner) if _is_union(inner) else (inner,)
    typed = tuple(m for m in members if isinstance(m, type) and issubclass(m, _RESPONSES))
    whole = bool(typed)
    optional = type(None) in members or inner is Any or inner is object
    request = None if callable(ask.request) else ask.request
    if request is None:
        may_decline = True
    else:
        _check(request, param, ask.pick)
        params = request.get("params") or {}
        may_decline = request["method"] == elicitation.METHOD
        if ask.pick is not None and ask.pick not in _required(params):
            may_decline = True  # an optional field may be left out
    if may_decline and not (whole or optional):
        raise TypeError(
            f"asked parameter {param!r}: the user may decline, so annotate it"
            " `T | None` (None when declined) or elicitation.ElicitationResponse"
        )
    return Question(
        param=param,
        key=ask.key or param,
        request=request,
        build=typing.cast(RequestFor, ask.request) if request is None else None,
        pick=ask.pick,
        whole=whole,
        typed=typed,
    )


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _required(params: Mapping[str, Any]) -> list[str]:
    schema = params.get("requestedSchema") or {}
    return list(schema.get("required") or ())


def _check(request: object, param: str, pick: str | None) -> None:
    if not isinstance(request, Mapping) or request.get("method") not in _READERS:
        raise ValueError(
            f"asked parameter {param!r}: not an input request"
            " (build one with snodo.elicitation, snodo.sampling or snodo.roots)"
        )
    if pick is None:
        return
    params = request.get("params") or {}
    if request["method"] != elicitation.METHOD or params.get("mode", "form") != "form":
        raise ValueError(f"asked parameter {param!r}: pick names a field of a form")
    properties = (params.get("requestedSchema") or {}).get("properties") or {}
    if pick not in properties:
        raise ValueError(f"asked parameter {param!r}: the form has no field {pick!r}")


def carried_state(ctx: Context) -> tuple[dict[str, Any], Any]:
    """The answers earlier rounds' asks were given, and what the handler itself sealed,
    from the flow's verified state."""
    data = ctx.state_data
    if type(data) is dict and CARRIED in data:
        carried = data[CARRIED]
        return (dict(carried) if isinstance(carried, dict) else {}), data.get("data")
    return {}, data


@dataclass(frozen=True, slots=True)
class Answered:
    """Every question answered: the values, the handler's context, the raw answers."""

    ctx: Context
    values: dict[str, Any]
    answers: dict[str, Any]


def answer_questions(
    questions: tuple[Question, ...], ctx: Context, arguments: Mapping[str, Any]
) -> InputRequired | Answered:
    """The asked parameters' values; or, when some are unanswered, the
    ``input_required`` that asks all of those at once."""
    carried, inner = carried_state(ctx)
    reading = ctx
    if carried:
        reading = refilled(ctx, input_responses={**carried, **ctx.input_responses})
    values: dict[str, Any] = {}
    answered: dict[str, Any] = {}
    unanswered: dict[str, Request] = {}
    for q in questions:
        request = q.asked(arguments)
        answer = _READERS[request["method"]](reading, q.key, request)
        if answer is MISSING:
            unanswered[q.key] = request
        else:
            values[q.param] = q.value(answer, request["method"])
            answered[q.key] = reading.input_responses[q.key]
    if unanswered:
        state = None
        if answered or inner is not None:
            state = ctx.seal({CARRIED: answered, "data": inner})
        return InputRequired(unanswered, state)
    # The handler sees what it sealed itself, not the envelope around it.
    handler_ctx = refilled(ctx, state_data=inner) if carried else ctx
    return Answered(handler_ctx, values, answered)


def carried_forward(ctx: Context, done: Answered, outcome: InputRequired) -> InputRequired:
    """A handler with asks that asks more itself: its state with the asks' answers
    beside it, so the next round still has them."""
    mark_taken(outcome)
    sealer = ctx.sealer
    data = outcome.state if outcome.state is not NO_STATE else UNKNOWN
    if data is UNKNOWN and isinstance(sealer, Sealer):  # the echoed state: the handler's part
        data = sealer.data_of(outcome.request_state, done.ctx.state_data)
    if data is UNKNOWN:
        return outcome  # not sealed by this server: the server refuses it (pinned)
    return InputRequired(outcome.input_requests, ctx.seal({CARRIED: done.answers, "data": data}))
