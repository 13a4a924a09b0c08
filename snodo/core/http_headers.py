"""The Streamable HTTP header layer of the current revision, without any I/O.

Every POST mirrors parts of its body in headers so that intermediaries can route
without parsing JSON (basic/transports/streamable-http.mdx): ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name`` (tools/call, prompts/get, resources/read) and, for tool
arguments whose schema property carries ``x-mcp-header: NAME``, ``Mcp-Param-NAME``.
A server that reads the body must refuse a request whose headers are missing or
disagree with it (HTTP 400, -32020). Values that are not plain visible ASCII travel
as ``=?base64?<standard base64 of UTF-8>?=``; decoding is strict (padding and
alphabet), and a malformed value is a mismatch.

Both sides use this module: the server to check, the client to produce.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from snodo.core.errors import HeaderMismatch
from snodo.core.observe import outgoing_trace_context
from snodo.revisions.tasks.tables import METHODS as TASK_METHODS

__all__ = [
    "check_headers",
    "decode_value",
    "encode_value",
    "header_params",
    "host_name",
    "name_for",
    "outgoing_trace_context",
    "request_headers",
    "valid_header_params",
]

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
SENTINEL_PREFIX = "=?base64?"
_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$", re.DOTALL)
_PLAIN = re.compile(r"^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$")
MAX_SAFE_INTEGER = 2**53 - 1
_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,4})?")
"""A decimal number as a header may spell an integer argument (no NaN, no underscores)."""

NAMED_BY = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # ext-tasks/tasks.md, "Streamable HTTP: Routing Headers": the task id routes.
    **{method: "taskId" for method in TASK_METHODS},
}


def name_for(method: str, params: Mapping[str, Any]) -> str | None:
    """The value ``Mcp-Name`` must carry for this request, if the method has one."""
    key = NAMED_BY.get(method)
    value = params.get(key) if key else None
    return value if isinstance(value, str) else None


def encode_value(value: str | int | bool) -> str:
    """A header value for a body value: plain when safe, base64 sentinel otherwise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value == "" or (_PLAIN.match(value) and not _SENTINEL.match(value)):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode("ascii") + "?="


def decode_value(raw: str) -> str:
    """The text a header value stands for; raises ValueError for a malformed sentinel."""
    if not raw.startswith(SENTINEL_PREFIX):  # a plain value: no regular expression to run
        return raw
    found = _SENTINEL.match(raw)
    if found is None:
        return raw
    try:
        return base64.b64decode(found.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ValueError("malformed base64 header value") from exc


def _header_properties(
    schema: Mapping[str, Any], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """(path, header name, property type) for each ``x-mcp-header`` reachable by properties."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for key, prop in properties.items():
        if not isinstance(prop, Mapping):
            continue
        if "x-mcp-header" in prop:
            yield (*path, key), prop["x-mcp-header"], prop.get("type")
        yield from _header_properties(prop, (*path, key))


def header_params(input_schema: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """The (argument path, header name) pairs a tool declares; raises ValueError if invalid.

    server/tools.mdx: names are non-empty RFC 9110 tokens, unique ignoring case, on
    string, integer or boolean properties only.
    """
    found: list[tuple[tuple[str, ...], str]] = []
    seen: set[str] = set()
    for path, name, kind in _header_properties(input_schema):
        if not isinstance(name, str) or not _TOKEN.match(name):
            raise ValueError(f"x-mcp-header {name!r} at {'.'.join(path)} is not a header token")
        if kind not in ("string", "integer", "boolean"):
            raise ValueError(f"x-mcp-header {name!r} must be on a string, integer or boolean")
        if name.lower() in seen:
            raise ValueError(f"x-mcp-header {name!r} is declared twice")
        seen.add(name.lower())
        found.append((path, name))
    return found


def valid_header_params(input_schema: Mapping[str, Any]) -> bool:
    """Whether the tool's ``x-mcp-header`` declarations are valid (``header_params``
    would not raise)."""
    try:
        header_params(input_schema)
    except ValueError:
        return False
    return True


def _lookup(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for step in path:
        if not isinstance(node, Mapping) or step not in node:
            return None
        node = node[step]
    return node


def request_headers(
    method: str,
    params: Mapping[str, Any],
    version: str,
    input_schema: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The headers a client sends with this request, the current trace context included."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    name = name_for(method, params)
    if name is not None:
        headers["Mcp-Name"] = encode_value(name)
    if method == "tools/call" and input_schema is not None:
        arguments = params.get("arguments") or {}
        for path, header in header_params(input_schema):
            value = _lookup(arguments, path)
            if value is not None and isinstance(value, (str, int, bool)):
                headers[f"Mcp-Param-{header}"] = encode_value(value)
    headers.update(outgoing_trace_context())  # as in _meta, for HTTP intermediaries
    return headers


def _same(header: str, value: Any) -> bool:
    # The usual header is the value itself, with no blank to strip and no sentinel to
    # decode (it cannot start with "="): equal, without doing either.
    if header == value and header[:1] not in " \t=" and header[-1:] not in " \t":
        return True
    try:
        text = decode_value(header.strip(" \t"))
    except ValueError:
        return False
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, int):
        # Numerically (42.0 equals 42, as streamable-http.mdx asks), but exactly: through
        # a float, 9007199254740990.6 would round to and match 9007199254740991.
        if _DECIMAL.fullmatch(text) is None:
            return False
        return Decimal(text) == value and abs(value) <= MAX_SAFE_INTEGER
    return bool(text == value)


def check_headers(
    headers: Mapping[str, str],
    method: str,
    params: Mapping[str, Any],
    mirrored: Sequence[tuple[tuple[str, ...], str]] = (),
) -> None:
    """Raise HeaderMismatch unless the headers agree with the body.

    ``headers`` has lower-case names; ``mirrored`` is the called tool's
    ``header_params``. The protocol version header is checked by the caller, before the
    _meta checks, as the spec orders them.
    """
    given = headers.get("mcp-method")
    if given is None or (given != method and given.strip(" \t") != method):
        raise HeaderMismatch("Header mismatch: Mcp-Method does not match the body's method")
    # name_for and _same's usual case written out: every request over HTTP comes here.
    key = NAMED_BY.get(method)
    name = params.get(key) if key else None
    if isinstance(name, str):
        raw = headers.get("mcp-name")
        if raw is None or (
            (raw != name or raw[:1] in " \t=" or raw[-1:] in " \t") and not _same(raw, name)
        ):
            raise HeaderMismatch("Header mismatch: Mcp-Name does not match the body")
    if method != "tools/call" or not mirrored:
        return
    arguments = params.get("arguments") or {}
    for path, header in mirrored:
        value = _lookup(arguments, path)
        raw = headers.get(f"mcp-param-{header.lower()}")
        if value is None:
            continue
        if raw is None or not _same(raw, value):
            raise HeaderMismatch(f"Header mismatch: Mcp-Param-{header} does not match the body")


_REG_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?")
_PORT = re.compile(r"[0-9]{1,5}")


def host_name(authority: str) -> str | None:
    """The host of an authority (``host[:port]``), lower-cased, brackets kept for IPv6;
    None unless it is exactly that (RFC 3986 3.2): userinfo, a bracketed part followed by
    anything but a port, or a port that is not a number are refused, never trimmed."""
    if authority.startswith("["):
        end = authority.find("]")
        host, rest = authority[: end + 1], authority[end + 1 :]
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
    else:
        host, colon, port = authority.partition(":")
        rest = colon + port
        if _REG_NAME.fullmatch(host) is None:
            return None
    if rest and (
        not rest.startswith(":") or _PORT.fullmatch(rest[1:]) is None or int(rest[1:]) > 65535
    ):
        return None
    return host.lower()
