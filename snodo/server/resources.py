"""Resources and resource templates, and what a read turns into.

Templates are RFC 6570 level 1: ``{name}`` stands for one simple-string expansion,
which percent-encodes everything outside the unreserved set, so a variable never spans
a ``/``, ``?`` or ``#``. Matching a URI against a template decodes the values.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from snodo.server.invoke import Handler, Invoker, described, invoker
from snodo.server.threads import Threads

__all__ = ["Resource", "ResourceTemplate", "make_resource", "make_template", "read_contents"]

_VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    definition: dict[str, Any]
    invoker: Invoker
    mime_type: str | None
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs, checked before the handler runs (none: open)."""


@dataclass(frozen=True, slots=True)
class ResourceTemplate:
    uri_template: str
    definition: dict[str, Any]
    invoker: Invoker
    mime_type: str | None
    pattern: re.Pattern[str]
    variables: tuple[str, ...]
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs, checked before the handler runs (none: open)."""

    def match(self, uri: str) -> dict[str, str] | None:
        found = self.pattern.fullmatch(uri)
        if found is None:
            return None
        return {name: urllib.parse.unquote(found.group(name)) for name in self.variables}


def _definition(
    key: str,
    value: str,
    name: str,
    function: Handler,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    extra: Mapping[str, Any] | None,
) -> dict[str, Any]:
    definition = described({key: value, "name": name}, function, title, description)
    if mime_type is not None:
        definition["mimeType"] = mime_type
    definition.update(extra or {})
    return definition


def make_resource(
    function: Handler,
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    extra: Mapping[str, Any] | None = None,
    scopes: Iterable[str] = (),
    inline: bool = False,
    timeout: float | None = None,
    threads: Threads | None = None,
) -> Resource:
    definition = _definition(
        "uri", uri, name or function.__name__, function, title, description, mime_type, extra
    )
    run = invoker(function, inline=inline, timeout=timeout, threads=threads)
    return Resource(uri, definition, run, mime_type, frozenset(scopes))


def make_template(
    function: Handler,
    uri_template: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    extra: Mapping[str, Any] | None = None,
    scopes: Iterable[str] = (),
    inline: bool = False,
    timeout: float | None = None,
    threads: Threads | None = None,
) -> ResourceTemplate:
    variables = tuple(_VARIABLE.findall(uri_template))
    if not variables:
        raise ValueError(f"resource template {uri_template!r} has no {{variable}}")
    if len(set(variables)) != len(variables):
        raise ValueError(f"resource template {uri_template!r} repeats a variable")
    pieces = _VARIABLE.split(uri_template)
    regex = "".join(
        re.escape(piece) if index % 2 == 0 else f"(?P<{piece}>[^/?#]+)"
        for index, piece in enumerate(pieces)
    )
    run = invoker(function, inline=inline, timeout=timeout, threads=threads)
    wanted = {p.name for p in run.parameters}
    if not run.accepts_any and wanted != set(variables):
        raise ValueError(
            f"resource template {uri_template!r}: function parameters {sorted(wanted)} "
            f"must be the template variables {sorted(variables)}"
        )
    definition = _definition(
        "uriTemplate",
        uri_template,
        name or function.__name__,
        function,
        title,
        description,
        mime_type,
        extra,
    )
    return ResourceTemplate(
        uri_template, definition, run, mime_type, re.compile(regex), variables, frozenset(scopes)
    )


def _one(uri: str, mime_type: str | None, value: Any) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    if isinstance(value, dict) and ("text" in value or "blob" in value):
        contents = {"uri": uri, **value}
        if mime_type is not None:
            contents.setdefault("mimeType", mime_type)
        return contents
    contents = {"uri": uri}
    if mime_type is not None:
        contents["mimeType"] = mime_type
    if isinstance(value, bytes):
        contents["blob"] = base64.b64encode(value).decode("ascii")
    elif isinstance(value, str):
        contents["text"] = value
    else:
        raise TypeError(
            f"a resource must return str, bytes or contents, not {type(value).__name__}"
        )
    return contents


def read_contents(uri: str, mime_type: str | None, value: Any) -> list[dict[str, Any]]:
    """What a resource function returned, as the ``contents`` of a ReadResourceResult."""
    if isinstance(value, BaseModel) and "contents" in type(value).model_fields:
        value = value.model_dump(mode="json", by_alias=True)["contents"]
    if isinstance(value, list):
        contents = [_one(uri, mime_type, item) for item in value]
    else:
        contents = [_one(uri, mime_type, value)]
    if not contents:
        raise ValueError("a resource read must return at least one contents item")
    return contents
