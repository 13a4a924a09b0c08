"""The usual ``tools/call`` params, recognised as valid without running the model.

Validating params against the generated ``CallToolRequestParams`` (with its ``_meta``,
client capabilities and client info models) is the largest single step of a tool call
in the core. Nearly every call is plain: a name, arguments, the version and
capabilities in ``_meta``, perhaps a request state. ``plain_call_params`` accepts only
params the model certainly accepts, by exact types and known keys (and a ``_meta`` equal
to one it found so before: a client sends the same one on each request); for anything
else it says no and the caller runs the model, so what is refused, and the message
saying why, are always the model's. It never refuses, it only spares the model.

The shapes below are those of the pinned modern models;
tests/core/test_plain_params.py checks them against the models' fields (so a
regeneration that changes those fields fails there) and checks, on generated params,
that whatever this accepts the model accepts.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from snodo.core.context import LOG_RANK
from snodo.revisions.authoring.protocol import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)

__all__ = ["plain_call_params"]

_META_NAMES: Final = frozenset(
    (
        "io_modelcontextprotocol_client_capabilities",
        "io_modelcontextprotocol_client_info",
        "io_modelcontextprotocol_log_level",
        "io_modelcontextprotocol_protocol_version",
        "progress_token",
    )
)
"""RequestMetaObject's field names: the models validate by name too, so a key spelled
like one is not an extra."""
_PARAMS_NAMES: Final = frozenset(("meta", "input_responses", "request_state"))
"""CallToolRequestParams' field names that differ from their keys on the wire."""
_EMPTY_FIELDS: Final = {"elicitation": ("form", "url"), "sampling": ("context", "tools")}
"""Capabilities whose fields are JSON objects: plain when each field given is ``{}``."""
_MAPS: Final = ("experimental", "extensions")
"""Capabilities mapping names to JSON objects: plain when each value is ``{}``."""
_INFO_TEXTS: Final = ("title", "description")


def _plain_capabilities(declared: Any) -> bool:
    if type(declared) is not dict:
        return False
    for key, value in declared.items():
        if key in _EMPTY_FIELDS:
            if type(value) is not dict:
                return False
            fields = _EMPTY_FIELDS[key]
            for name, item in value.items():
                if name not in fields or type(item) is not dict or item:
                    return False
        elif key in _MAPS:
            if type(value) is not dict:
                return False
            for name, item in value.items():
                if type(name) is not str or type(item) is not dict or item:
                    return False
        elif key == "roots":
            if type(value) is not dict:  # RootsCapability has no fields: anything is extra
                return False
        elif type(key) is not str:
            return False
        # Any other key is an extra, which the model keeps unvalidated.
    return True


def _plain_client_info(info: Any) -> bool:
    if type(info) is not dict or type(info.get("name")) is not str:
        return False
    if type(info.get("version")) is not str:
        return False
    return all(
        key in ("name", "version") or (key in _INFO_TEXTS and type(value) is str)
        for key, value in info.items()
    )


_USUAL_META: Final = frozenset((META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES))
MAX_KNOWN_METAS: Final = 8
"""Plain ``_meta`` objects kept (copies, the first seen): a client sends the same one on
every request, but for its progress token."""
_KNOWN_METAS: list[dict[Any, Any]] = []


def _plain_meta(meta: Any) -> bool:
    """Whether the model accepts this ``_meta``, kept when it does (the caller looks
    among the kept ones first: one equal to a ``_meta`` found plain before is plain).
    Equal means the same keys with equal values: strings, and objects of objects, which
    the model takes as it took the first (any mapping where it took a dict, a str
    subclass where it took a str; tests/core/test_plain_params.py). A progress token is
    never kept: 1 equals True and 1.0, which the model tells apart."""
    if type(meta) is not dict:
        return False
    plain = _checked_meta(meta)
    if plain and len(_KNOWN_METAS) < MAX_KNOWN_METAS and "progressToken" not in meta:
        _KNOWN_METAS.append(copy.deepcopy(meta))  # a copy: the request's may change later
    return plain


def _checked_meta(meta: dict[Any, Any]) -> bool:
    # Keys typed Any: compiled, a dict[str, ...] would refuse a key that is not a str,
    # which this must answer (not plain), not raise.
    if type(meta.get(META_PROTOCOL_VERSION)) is not str:
        return False
    if meta.keys() == _USUAL_META:  # the usual _meta: only the capabilities to look at
        return _plain_capabilities(meta[META_CLIENT_CAPABILITIES])
    for key, value in meta.items():
        if key == META_PROTOCOL_VERSION:
            continue
        if key == META_CLIENT_CAPABILITIES:
            if not _plain_capabilities(value):
                return False
        elif key == "progressToken":
            if type(value) is not str and type(value) is not int:
                return False
        elif key == META_LOG_LEVEL:
            if type(value) is not str or value not in LOG_RANK:
                return False
        elif key == META_CLIENT_INFO:
            if not _plain_client_info(value):
                return False
        elif type(key) is not str or key in _META_NAMES:
            return False
    return META_CLIENT_CAPABILITIES in meta


def plain_call_params(params: Any, answers_checked: bool = False) -> bool:
    """True only for ``tools/call`` params that ``CallToolRequestParams`` accepts.

    ``answers_checked``: each of the inputResponses has been checked (as
    ``snodo.core.input_responses.check_responses`` does), so only their object is looked at here.
    """
    if type(params) is not dict or type(params.get("name")) is not str:
        return False
    for key, value in params.items():
        if key == "name":
            continue
        if key == "_meta":
            try:  # a kept _meta (see _plain_meta)?
                known = type(value) is dict and value in _KNOWN_METAS
            except Exception:  # a value whose __eq__ fails (never one read from JSON)
                return False
            if not known and not _plain_meta(value):
                return False
        elif key == "arguments":
            if type(value) is not dict:
                return False
            for name in value:
                if type(name) is not str:
                    return False
        elif key == "requestState":
            if type(value) is not str:
                return False
        elif key == "inputResponses":
            # Answers are checked one by one, by the caller, or by the model.
            if type(value) is not dict or (value and not answers_checked):
                return False
            for name in value:
                if type(name) is not str:
                    return False
        elif type(key) is not str or key in _PARAMS_NAMES:
            return False
    return "_meta" in params
