"""Resources and resource templates, and what a read turns into.

A template's URI is matched by ``snodo.server.uri_templates``: the RFC 6570 forms
resource URIs use, values decoded, converted to the handler's types and refused when
they decode to a path that could escape (unless the template allows paths).
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from snodo.core.caching import CacheHint
from snodo.server.invoke import Invoker, UserFunction, described, invoker, listed_fields
from snodo.server.media import Media
from snodo.server.options import ResourceOptions, TemplateOptions
from snodo.server.threads import Threads
from snodo.server.uri_templates import UriTemplate, compile_template

__all__ = ["Resource", "ResourceTemplate", "make_resource", "make_template", "read_contents"]


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    definition: dict[str, Any]
    invoker: Invoker
    mime_type: str | None
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs, checked before the handler runs (none: open)."""
    cache: CacheHint | None = None
    """The caching hint its reads carry; None: the server's."""


@dataclass(frozen=True, slots=True)
class ResourceTemplate:
    uri_template: str
    definition: dict[str, Any]
    invoker: Invoker
    mime_type: str | None
    template: UriTemplate
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs, checked before the handler runs (none: open)."""
    cache: CacheHint | None = None
    """The caching hint reads through it carry; None: the server's."""

    @property
    def variables(self) -> tuple[str, ...]:
        return self.template.names

    def match(self, uri: str) -> dict[str, Any] | None:
        """The handler's arguments for ``uri``, or None when it does not match (or a value
        is a path this template does not allow); -32602 for a value of the wrong type."""
        return self.template.match(uri)


def _definition(
    key: str,
    value: str,
    function: UserFunction,
    options: ResourceOptions | TemplateOptions,
    listed: Mapping[str, Any],
) -> dict[str, Any]:
    name = options.get("name") or function.__name__
    definition = described(
        {key: value, "name": name}, function, options.get("title"), options.get("description")
    )
    mime_type = options.get("mime_type")
    if mime_type is not None:
        definition["mimeType"] = mime_type
    definition.update(listed_fields(**listed))
    definition.update(options.get("extra") or {})
    return definition


def make_resource(
    function: UserFunction,
    uri: str,
    options: ResourceOptions | None = None,
    *,
    threads: Threads | None = None,
) -> Resource:
    """A resource from an author's function and its options (``ResourceOptions``)."""
    options = options or {}
    size, mime_type, cache = options.get("size"), options.get("mime_type"), options.get("cache")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise ValueError(f"resource {uri!r}: size must be a number of bytes, 0 or more")
    listed = {
        "icons": options.get("icons"),
        "annotations": options.get("annotations"),
        "size": size,
        "meta": options.get("meta"),
    }
    definition = _definition("uri", uri, function, options, listed)
    run = invoker(
        function,
        inline=options.get("inline", False),
        timeout=options.get("timeout"),
        threads=threads,
    )
    return Resource(uri, definition, run, mime_type, frozenset(options.get("scopes", ())), cache)


def make_template(
    function: UserFunction,
    uri_template: str,
    options: TemplateOptions | None = None,
    *,
    threads: Threads | None = None,
) -> ResourceTemplate:
    """A resource template from an author's function and its options
    (``TemplateOptions``)."""
    options = options or {}
    run = invoker(
        function,
        inline=options.get("inline", False),
        timeout=options.get("timeout"),
        threads=threads,
    )
    allow_paths = options.get("allow_paths", False)
    template = compile_template(
        uri_template,
        {p.name: p.annotation for p in run.parameters},
        frozenset(p.name for p in run.parameters if p.default is not inspect.Parameter.empty),
        allow_paths=allow_paths,
    )
    variables = template.names
    wanted = {p.name for p in run.parameters}
    if not run.accepts_any and wanted != set(variables):
        raise ValueError(
            f"resource template {uri_template!r}: function parameters {sorted(wanted)} "
            f"must be the template variables {sorted(variables)}"
        )
    listed = {
        "icons": options.get("icons"),
        "annotations": options.get("annotations"),
        "meta": options.get("meta"),
    }
    definition = _definition("uriTemplate", uri_template, function, options, listed)
    return ResourceTemplate(
        uri_template,
        definition,
        run,
        options.get("mime_type"),
        template,
        frozenset(options.get("scopes", ())),
        options.get("cache"),
    )


def _one(uri: str, mime_type: str | None, value: Any) -> dict[str, Any]:
    if isinstance(value, Media):
        return value.contents(uri)
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
