"""Admission: the last check an outgoing InputRequiredResult passes before it leaves.

It runs after the handler and every middleware have returned, on the framework's own
copy of the request, so nothing a handler or middleware does can get an input request
past it:

- only tools/call, resources/read and prompts/get may answer input-required
  (basic/patterns/mrtr.mdx); anywhere else it is a server bug, answered with -32603;
- every input request must be a valid InputRequest of the request's revision (-32603 if not:
  the server built it wrong, the client did nothing wrong); requests from the builders
  were checked when built and are immutable (``snodo.core.input_requests``), so they are not checked
  again;
- every input request's capability must be declared by *this* request's client
  capabilities; if any is not, the whole result is refused with -32021 naming all the
  missing needs in one ClientCapabilities object.

Each of the three reads the tables and models of the request's revision
(``snodo.revisions``); without one, the authoring revision's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from snodo.core.capabilities import missing
from snodo.core.errors import InternalError, MissingClientCapability
from snodo.core.input_requests import BuiltRequest
from snodo.core.result import InputRequired, mark_taken
from snodo.revisions import AUTHORING, REVISIONS, Revision

__all__ = ["admit"]

log = logging.getLogger("snodo")

_AUTHORING = REVISIONS.of(AUTHORING)


def admit(
    method: str,
    outcome: InputRequired,
    declared: Mapping[str, Any],
    revision: Revision | None = None,
) -> dict[str, Any]:
    """The InputRequiredResult to send, or raise the error to send instead."""
    mark_taken(outcome)
    revision = _AUTHORING if revision is None else revision
    if method not in revision.input_required_methods:
        log.error(
            "%s handler returned input_required, which only %s may",
            method,
            sorted(revision.input_required_methods),
        )
        raise InternalError()
    model: Any = revision.input_required_result  # the overlay's name for it
    if model is None:
        log.error(
            "%s handler returned input_required, which %s has no result for", method, revision
        )
        raise InternalError()
    result = outcome.to_result()
    requests = result.get("inputRequests", {})
    built = True
    for request in requests.values():
        if not isinstance(request, BuiltRequest):
            built = False  # made by hand, not by a module's builder: the model checks it
            break
    try:
        if not built:
            model.model_validate(result)
        elif not isinstance(result.get("requestState", ""), str):
            # All the model could refuse of the rest, which ``to_result`` built: its keys
            # are resultType (a str), inputRequests and requestState.
            model.model_validate({**result, "inputRequests": {}})
    except ValidationError as exc:
        log.error("%s handler built an invalid input request: %s", method, exc)
        raise InternalError() from exc
    lacking = missing(requests.values(), declared, revision.capability_rules)
    if lacking:
        raise MissingClientCapability(lacking)
    return result
