"""Every answer checked against the revision its request named: ``check_answers``.

A server builds each answer from its request revision's facts; checking is the proof.
With it on (``Server(spec=Spec(check_answers=True))``, on by default under ``snodo dev`` and
wherever ``SNODO_CHECK_ANSWERS=1``), every response, every notification a request
streams or collects and every notification of a listen stream is validated with the
negotiated revision's generated models before it leaves:

- a result by its kind: the method's result model (the revision's, or an extension's
  for an extension's method), the input-required result the revision's overlay names,
  or, for another ``resultType``, the result an extension defines for it (a task);
- an error with the revision's JSON-RPC error response;
- a notification with the revision's model of its method, or an extension's; a
  notification in a core namespace the revision does not define is invalid by itself.

An invalid answer is logged (``snodo.answers``, with the path of its first error) once
per revision, method and path, and, where ``SNODO_INVALID_ANSWERS`` names a file,
written there as one JSON line each time: the test suite reads that file to fail a test
whose server answered outside its revision. The answer is sent all the same: checking
tells, it never changes what the server says. Off, it costs the request path one
attribute read.
"""

from __future__ import annotations

import json
import logging
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from snodo.core import jsonrpc
from snodo.core.context import Emit
from snodo.revisions import Revision, Revisions

__all__ = ["CHECK_ENV", "RECORD_ENV", "AnswerChecks", "Invalid", "checking"]

log = logging.getLogger("snodo.answers")

CHECK_ENV = "SNODO_CHECK_ANSWERS"
"""``1`` turns checking on for every server of the process (and of the processes it
starts, which inherit it) that was not told otherwise."""
RECORD_ENV = "SNODO_INVALID_ANSWERS"
"""A file each invalid answer is appended to, as a JSON line."""


def checking(asked: bool | None) -> bool:
    """Whether a server checks its answers: as asked, else as ``SNODO_CHECK_ANSWERS`` says."""
    if asked is not None:
        return asked
    return os.environ.get(CHECK_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class Invalid:
    """An answer its revision does not define: where, and why."""

    version: str
    method: str
    path: str
    """Where in the message the first error is (``result.tools.0.name``)."""
    reason: str

    def __str__(self) -> str:
        return (
            f"{self.method} answered outside revision {self.version} at {self.path or '/'}:"
            f" {self.reason}"
        )


def _path(exc: ValidationError, prefix: str) -> tuple[str, str]:
    first = exc.errors(include_input=False, include_url=False)[0]
    steps = [prefix, *(str(step) for step in first["loc"])] if prefix else first["loc"]
    return ".".join(str(step) for step in steps), str(first["msg"])


def _kinds(revisions: Revisions) -> dict[str, type[BaseModel]]:
    """The results extensions define for a ``resultType`` of their own (``task``), by
    the constant their models fix it to."""
    found: dict[str, type[BaseModel]] = {}
    for package in revisions.extensions.values():
        for spec in getattr(package.tables, "METHODS", {}).values():
            found.update(_fixed_kind(spec.result))
        for model in vars(package.models).values():
            found.update(_fixed_kind(model))
    return found


def _fixed_kind(model: Any) -> dict[str, type[BaseModel]]:
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return {}  # a union of results: its branches are models of their own
    field = model.model_fields.get("result_type")
    if field is None or typing.get_origin(field.annotation) is not typing.Literal:
        return {}
    return {str(kind): model for kind in typing.get_args(field.annotation)}


class AnswerChecks:
    """Checks answers with the models of the revisions of ``revisions`` and their
    extensions; what it found invalid is in ``invalid`` (the latest hundred)."""

    def __init__(self, revisions: Revisions, record: str | None = None) -> None:
        self.revisions = revisions
        self.record = os.environ.get(RECORD_ENV) if record is None else record
        self.kinds = _kinds(revisions)
        self.extension_methods: dict[str, Any] = {}
        self.extension_notifications: dict[str, Any] = {}
        for package in revisions.extensions.values():
            self.extension_methods.update(getattr(package.tables, "METHODS", {}))
            self.extension_notifications.update(getattr(package.tables, "SERVER_NOTIFICATIONS", {}))
        self.invalid: list[Invalid] = []
        self._told: set[tuple[str, str, str]] = set()
        self._adapters: dict[int, TypeAdapter[Any]] = {}

    # -- what the core and the transports call -----------------------------------------

    def reply(self, revision: Revision | None, method: str, response: Any) -> None:
        """Check one response to ``method`` of ``revision`` (None: a version the server
        does not serve, whose error is checked with its newest revision)."""
        if not isinstance(response, dict):
            return
        revision = revision or self._fallback()
        if revision is None:
            return
        found = self.response(revision, method, jsonrpc.decode_passthrough(response) or response)
        if found is not None:
            self._tell(found)

    def watch(self, revision: Revision, emit: Emit, method: str = "") -> Emit:
        """``emit``, each message checked with ``revision`` first: a notification, a
        request a legacy session's server sends its client, or the final response to
        ``method`` a stream ends with (a listen's)."""

        def checked(message: dict[str, Any]) -> None:
            self.check_message(revision, message, method)
            emit(message)

        return checked

    def check_message(self, revision: Revision, message: Mapping[str, Any], method: str) -> None:
        if "result" in message or "error" in message:
            found = self.response(revision, method, message)
        elif "id" in message:
            found = self.request(revision, message)
        else:
            found = self.notification(revision, message)
        if found is not None:
            self._tell(found)

    # -- the checks --------------------------------------------------------------------

    def response(
        self, revision: Revision, method: str, response: Mapping[str, Any]
    ) -> Invalid | None:
        """Why ``response`` to ``method`` is not one of ``revision``, or None."""
        error = response.get("error")
        if error is not None:
            model: Any = getattr(revision.models, "JSONRPCErrorResponse", None)
            return None if model is None else self._validate(revision, method, model, response, "")
        result = response.get("result")
        if not isinstance(result, dict):
            return Invalid(revision.version, method, "result", "a response with no result object")
        kind = result.get("resultType", "complete")
        if kind == "input_required":
            model = revision.input_required_result
            if model is None:
                return Invalid(
                    revision.version, method, "result.resultType", "no input-required result"
                )
        elif kind == "complete":
            spec = revision.methods.get(method) or self.extension_methods.get(method)
            if spec is None:  # a method a server added with no model of its own
                return None
            model = spec.result
        else:
            model = self.kinds.get(str(kind))
            if model is None:
                return Invalid(
                    revision.version,
                    method,
                    "result.resultType",
                    f"neither the revision nor an extension defines resultType {kind!r}",
                )
        return self._validate(revision, method, model, result, "result")

    def request(self, revision: Revision, message: Mapping[str, Any]) -> Invalid | None:
        """Why ``message``, a request to the client, is not one of ``revision``, or None."""
        method = str(message.get("method"))
        spec = revision.server_requests.get(method)
        if spec is None:
            return Invalid(
                revision.version, method, "method", "the revision defines no such request"
            )
        return self._validate(revision, method, spec.request, message, "")

    def notification(self, revision: Revision, note: Mapping[str, Any]) -> Invalid | None:
        """Why ``note`` is not a notification of ``revision``, or None."""
        method = str(note.get("method"))
        spec = revision.tables.SERVER_NOTIFICATIONS.get(method)
        if spec is None:
            spec = self.extension_notifications.get(method)
        if spec is None:
            if method.split("/", 1)[0] in self.revisions.namespaces:
                return Invalid(
                    revision.version, method, "method", "the revision defines no such notification"
                )
            return None  # an extension's own, which no pinned schema describes
        return self._validate(revision, method, spec.notification, note, "")

    def _validate(
        self,
        revision: Revision,
        method: str,
        model: Any,
        value: Mapping[str, Any],
        prefix: str,
    ) -> Invalid | None:
        """``value`` checked with ``model``: a model, or a union of them (an alias)."""
        try:
            if isinstance(model, type) and issubclass(model, BaseModel):
                model.model_validate(value)
            else:
                adapter = self._adapters.get(id(model))
                if adapter is None:
                    adapter = self._adapters[id(model)] = TypeAdapter(model)
                adapter.validate_python(value)
        except ValidationError as exc:
            path, reason = _path(exc, prefix)
            return Invalid(revision.version, method, path, reason)
        except RecursionError:
            return Invalid(revision.version, method, prefix, "nested too deeply to check")
        return None

    # -- telling -----------------------------------------------------------------------

    def _fallback(self) -> Revision | None:
        try:
            return self.revisions.newest("modern")
        except LookupError:
            return None

    def _tell(self, found: Invalid) -> None:
        self.invalid = [*self.invalid[-99:], found]
        key = (found.version, found.method, found.path)
        if key not in self._told:
            self._told.add(key)
            log.error("invalid answer: %s", found)
        if self.record:
            line = json.dumps(
                {
                    "version": found.version,
                    "method": found.method,
                    "path": found.path,
                    "reason": found.reason[:500],
                    "pid": os.getpid(),
                }
            )
            with open(self.record, "a", encoding="utf-8") as out:
                out.write(line + "\n")
