"""What the input-request tests share: a retry's context and the wire check."""

from __future__ import annotations

from typing import Any

from snodo.core.context import Context
from snodo_wire import adapters


def ctx(**responses: Any) -> Context:
    """The context of a tools/call retry carrying these answers."""
    return Context(
        request_id=1,
        request_method="tools/call",
        request_params={},
        protocol_version="2026-07-28",
        client_capabilities={},
        input_responses=responses,
    )


def wire_valid(request: dict[str, Any]) -> None:
    adapters.input_request.validate_python(request, by_alias=True, by_name=False)
