"""Ask the client's LLM for a completion: ``sampling/createMessage`` input requests.

Deprecated in the revision snodo speaks (SEP-2577; client/sampling.mdx): new designs SHOULD NOT
adopt it and existing ones SHOULD move to calling a model provider directly. It stays in
the schema for at least twelve months and the conformance runner still scores it, so
snodo keeps it working.

Build a request with :func:`create_message` (messages from :func:`message`), return it
through ``snodo.core.result.input_required``, and read the answer on the retry with
:func:`response`. Every option is checked when the request is built, so a mistake raises
``ValueError`` in the handler, naming the option, instead of reaching the client.
Options take the wire's names and shapes (``{"mimeType": ...}``, not ``mime_type``).

Sampled content is model output the client chose to hand back: treat it as untrusted
input, never as an instruction, a verified fact or something to execute, and bound how
much of it you keep in request state (client/sampling.mdx, "Security Considerations").

The core admits the request only when the client declared ``sampling``, plus
``sampling.tools`` for ``tools``/``tool_choice`` and ``sampling.context`` for an
``include_context`` other than ``"none"``; this module does not check capabilities.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ValidationError

from snodo.core import input_responses as answers
from snodo.core.context import Context
from snodo.core.input_requests import BuiltRequest
from snodo.core.result import MISSING
from snodo.revisions.authoring import adapters
from snodo.revisions.authoring.models import CreateMessageResult, SamplingMessage, Tool

__all__ = [
    "INCLUDE_CONTEXT",
    "ROLES",
    "TOOL_CHOICE_MODES",
    "CreateMessageResult",
    "IncludeContext",
    "Role",
    "create_message",
    "message",
    "response",
    "text",
]

METHOD = "sampling/createMessage"
KIND = "sampling"

Role: TypeAlias = Literal["user", "assistant"]
"""Who says a sampling message."""
IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]
"""Which servers' context the client may add to a sample (the ``sampling.context``
capability)."""

ROLES = frozenset({"user", "assistant"})
"""schema.json Role."""
INCLUDE_CONTEXT = frozenset({"none", "thisServer", "allServers"})
"""schema.json CreateMessageRequestParams.includeContext (the last two deprecated, SEP-2596)."""
TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
"""schema.json ToolChoice.mode."""

_PRIORITIES = ("costPriority", "speedPriority", "intelligencePriority")
_MESSAGE_KEYS = frozenset({"role", "content", "_meta"})


def message(
    role: Role, content: str | Mapping[str, Any] | Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """A SamplingMessage: ``content`` is one content block, a list of them, or a string
    (which becomes one text block)."""
    if isinstance(content, str):
        content = {"type": "text", "text": content}
    return _message({"role": role, "content": content}, "message")


def create_message(
    messages: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int,
    system_prompt: str | None = None,
    model_preferences: Mapping[str, Any] | None = None,
    temperature: float | None = None,
    stop_sequences: Sequence[str] | None = None,
    include_context: IncludeContext | None = None,
    metadata: Mapping[str, Any] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: Mapping[str, Any] | None = None,
) -> BuiltRequest:
    """A bare ``sampling/createMessage`` request; ``None`` leaves an option out.

    - ``messages``: a non-empty list of SamplingMessages (see :func:`message`);
    - ``max_tokens``: a positive integer (the client MUST NOT exceed it);
    - ``model_preferences``: ``hints`` (a list of ``{"name": str}``, other hint keys
      are the client's to interpret) and ``costPriority``/``speedPriority``/
      ``intelligencePriority`` numbers in [0, 1]; no other keys;
    - ``temperature``: a finite number; ``stop_sequences``: a list of strings;
    - ``include_context``: ``"none"``, ``"thisServer"`` or ``"allServers"``;
    - ``metadata``: a JSON object passed through to the client's model provider;
    - ``tools``: Tool definitions with distinct names (``name``, ``inputSchema``, ...);
    - ``tool_choice``: ``{"mode": "auto" | "none" | "required"}``; ``"required"``
      needs at least one tool, since the model MUST then call one.

    Checks are structural: whether a ``tool_result`` answers an earlier ``tool_use``
    (client/sampling.mdx, "Tool Use") is the conversation's business, not checked here.
    """
    if isinstance(messages, str | Mapping) or not isinstance(messages, Sequence):
        raise ValueError("messages: must be a list of messages")
    if not messages:
        raise ValueError("messages: must not be empty")
    params: dict[str, Any] = {
        "messages": [_message(m, f"messages[{i}]") for i, m in enumerate(messages)],
    }
    if not _is_int(max_tokens) or max_tokens < 1:
        raise ValueError("max_tokens: must be a positive integer")
    params["maxTokens"] = max_tokens
    if system_prompt is not None:
        if not isinstance(system_prompt, str):
            raise ValueError("system_prompt: must be a string")
        params["systemPrompt"] = system_prompt
    if model_preferences is not None:
        params["modelPreferences"] = _model_preferences(model_preferences)
    if temperature is not None:
        if not _is_number(temperature):
            raise ValueError("temperature: must be a finite number")
        params["temperature"] = temperature
    if stop_sequences is not None:
        if isinstance(stop_sequences, str) or not isinstance(stop_sequences, Sequence):
            raise ValueError("stop_sequences: must be a list of strings")
        if not all(isinstance(s, str) for s in stop_sequences):
            raise ValueError("stop_sequences: must be a list of strings")
        params["stopSequences"] = list(stop_sequences)
    if include_context is not None:
        if include_context not in INCLUDE_CONTEXT:
            raise ValueError(f"include_context: must be one of {sorted(INCLUDE_CONTEXT)}")
        params["includeContext"] = include_context
    if metadata is not None:
        if not isinstance(metadata, Mapping):
            raise ValueError("metadata: must be a JSON object")
        params["metadata"] = _json_object(metadata, "metadata")
    if tools is not None:
        params["tools"] = _tools(tools)
    if tool_choice is not None:
        params["toolChoice"] = _tool_choice(tool_choice, has_tools=bool(tools))
    request = {"method": METHOD, "params": params}
    try:
        adapters.input_request.validate_python(request, by_alias=True, by_name=False)
    except ValidationError as exc:  # pragma: no cover - guarded by the checks above
        raise ValueError(f"request does not match the schema: {_describe(exc)}") from None
    return BuiltRequest(request)


def text(result: CreateMessageResult) -> str:
    """The text of a sampling result: its text blocks joined, "" when it has none.

    Sampled text is model output chosen by the client: untrusted input.
    """
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return "".join(getattr(block, "text", "") for block in blocks if block.type == "text")


def response(ctx: Context, key: str, request: Mapping[str, Any]) -> CreateMessageResult | MISSING:
    """The client's CreateMessageResult for ``request`` under ``key``, or ``MISSING``.

    Reads as ``snodo.core.input_responses`` describes for every kind of answer; the answer is not
    matched against the request beyond its kind. Returns the generated
    ``CreateMessageResult`` model (typed access to ``role``, ``content``, ``model``,
    ``stop_reason``; ``model_dump()`` gives the wire dict back). Unknown fields are kept
    on the model and carry no meaning here. An empty content list is no answer, and
    invalid.
    """
    answers.check_request(request, METHOD)
    result = answers.read(ctx, key, request, CreateMessageResult, KIND)
    if result is MISSING:
        return MISSING
    if isinstance(result.content, list) and not result.content:
        raise answers.invalid(KIND, key)  # an answer with nothing in it is no answer
    return result


def _message(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: must be an object with role and content")
    for key in value:
        if key not in _MESSAGE_KEYS:
            raise ValueError(f"{path}: unsupported key {key!r}")
    if value.get("role") not in ROLES:
        raise ValueError(f"{path}.role: must be 'user' or 'assistant'")
    content = value.get("content")
    if isinstance(content, Sequence) and not isinstance(content, str) and not content:
        raise ValueError(f"{path}.content: must not be an empty list")
    copied = _json_object(value, path)
    _validate(SamplingMessage, copied, path)
    return copied


def _model_preferences(value: object) -> dict[str, Any]:
    path = "model_preferences"
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: must be an object")
    for key in value:
        if key != "hints" and key not in _PRIORITIES:
            raise ValueError(f"{path}: unsupported key {key!r}")
    for key in _PRIORITIES:
        if key in value and (not _is_number(value[key]) or not 0 <= value[key] <= 1):
            raise ValueError(f"{path}.{key}: must be a number from 0 to 1")
    if "hints" in value:
        hints = value["hints"]
        if isinstance(hints, str | Mapping) or not isinstance(hints, Sequence):
            raise ValueError(f"{path}.hints: must be a list of {{'name': str}} objects")
        for index, hint in enumerate(hints):
            if not isinstance(hint, Mapping) or not isinstance(hint.get("name"), str):
                raise ValueError(f"{path}.hints[{index}]: must be an object with a string name")
    return _json_object(value, path)


def _tools(value: object) -> list[Any]:
    if isinstance(value, str | Mapping) or not isinstance(value, Sequence):
        raise ValueError("tools: must be a list of tool definitions")
    out: list[Any] = []
    names: set[str] = set()
    for index, tool in enumerate(value):
        path = f"tools[{index}]"
        if not isinstance(tool, Mapping):
            raise ValueError(f"{path}: must be a tool definition object")
        copied = _json_object(tool, path)
        _validate(Tool, copied, path)
        if copied["name"] in names:
            raise ValueError(f"{path}.name: {copied['name']!r} is already used")
        names.add(copied["name"])
        out.append(copied)
    return out


def _tool_choice(value: object, *, has_tools: bool) -> dict[str, Any]:
    path = "tool_choice"
    if not isinstance(value, Mapping) or any(key != "mode" for key in value):
        raise ValueError(f"{path}: must be {{'mode': 'auto' | 'none' | 'required'}}")
    if "mode" in value and value["mode"] not in TOOL_CHOICE_MODES:
        raise ValueError(f"{path}.mode: must be one of {sorted(TOOL_CHOICE_MODES)}")
    if value.get("mode") == "required" and not has_tools:
        raise ValueError(f"{path}: mode 'required' needs at least one tool")
    return dict(value)


def _validate(model: type[BaseModel], value: dict[str, Any], path: str) -> None:
    """Check ``value`` with a generated model, by wire names only: the models also accept
    Python names (``mime_type``), which would otherwise slip through and break the wire."""
    try:
        model.model_validate(value, by_alias=True, by_name=False)
    except ValidationError as exc:
        raise ValueError(f"{path}: not a valid {model.__name__}: {_describe(exc)}") from None


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or '(root)'}: {error['msg']}"
        for error in exc.errors(include_input=False, include_url=False)
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def _json_object(value: Mapping[Any, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = _json_copy(value, path)
    return out


def _json_copy(value: object, path: str) -> Any:
    """A plain JSON copy (dicts with string keys, lists, str, int, finite float, bool,
    None); anything else raises ``ValueError`` naming where it sits."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path}: NaN and infinities are not JSON")
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{path}: object keys must be strings")
            out[key] = _json_copy(item, f"{path}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_json_copy(item, f"{path}[{index}]") for index, item in enumerate(value)]
    raise ValueError(f"{path}: {type(value).__name__} is not a JSON value")
