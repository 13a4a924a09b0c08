"""Ask which directories the client works in: ``roots/list`` input requests.

Deprecated in the revision snodo speaks (SEP-2577; client/roots.mdx): prefer tool arguments,
resource URIs or configuration. It stays in the schema and the conformance runner
still scores it, so snodo keeps it working.

A root is a claim the client makes about its file system, not an access grant: the
protocol does not confine a server to its roots (client/roots.mdx, "Security
Considerations"). Use :func:`contains` to keep work inside them, and still check every
path against your own authorization.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from snodo.core import input_responses as answers
from snodo.core.context import Context
from snodo.core.input_requests import BuiltRequest
from snodo.core.result import MISSING
from snodo.revisions.authoring.models import ListRootsResult, Root

__all__ = ["ListRootsResult", "Root", "contains", "list_roots", "response", "root_path"]

METHOD = "roots/list"
KIND = "roots"

FILE_PREFIX = "file://"
"""Every root URI MUST start with this in the current revision (schema.json Root.uri)."""


def list_roots() -> BuiltRequest:
    """A bare ``roots/list`` request. It takes no params (schema.json ListRootsRequest:
    ``params`` is optional and holds only ``_meta``), so none are sent."""
    return BuiltRequest({"method": METHOD})


def response(ctx: Context, key: str, request: Mapping[str, Any]) -> ListRootsResult | MISSING:
    """The client's roots under ``key`` as the generated ``ListRootsResult``, or
    ``MISSING`` when the retry carries none.

    Reads as ``snodo.core.input_responses`` describes for every kind of answer: ``request`` is the
    ``roots/list`` request sent under ``key``. A root URI that does not start with
    ``file://`` (client/roots.mdx) makes the answer invalid too.
    """
    answers.check_request(request, METHOD)
    result = answers.read(ctx, key, request, ListRootsResult, KIND)
    if result is MISSING:
        return MISSING
    if not all(root.uri.startswith(FILE_PREFIX) for root in result.roots):
        raise answers.invalid(KIND, key)
    return result


def root_path(uri: str) -> str:
    """The absolute, normalised POSIX path a local ``file://`` URI names.

    Percent escapes are decoded per segment (``%20`` is a space), ``.`` and ``..`` are
    resolved lexically (``..`` stops at ``/``), repeated slashes collapse. Raises
    ``ValueError`` for other schemes, a host other than empty or ``localhost`` (a
    remote share is no local path), a query or fragment, control characters, an escape
    that decodes to ``/`` or NUL, or escapes that are not UTF-8.
    """
    if not isinstance(uri, str) or not uri.startswith(FILE_PREFIX):
        raise ValueError("not a file:// URI")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in uri):
        raise ValueError("file URI contains control characters")  # urlsplit would drop some
    parts = urlsplit(uri)
    if parts.netloc not in ("", "localhost"):
        raise ValueError("file URI names a remote host")
    if "?" in uri or "#" in uri:
        raise ValueError("file URI has a query or fragment")
    if not parts.path.startswith("/"):
        raise ValueError("file URI has no absolute path")
    segments: list[str] = []
    for raw in parts.path.split("/"):
        segment = unquote(raw, errors="strict")
        if "/" in segment or "\x00" in segment:
            raise ValueError("file URI has an escaped '/' or NUL in a segment")
        segments.append(segment)
    return _join(_normalise(segments))


def contains(
    roots: ListRootsResult | Iterable[Root | Mapping[str, Any] | str],
    path: str | os.PathLike[str],
    *,
    follow_symlinks: bool = False,
) -> bool:
    """Whether the absolute filesystem ``path`` lies in (or is) one of ``roots``.

    ``roots`` is a ListRootsResult, or Root models, ``{"uri": ...}`` objects or URI
    strings. Both sides are normalised lexically (see :func:`root_path`); segments are
    compared whole, so ``file:///a/b`` contains ``/a/b`` and ``/a/b/c`` but not
    ``/a/bc``. ``path`` is taken literally: ``%41`` in it is not decoded.

    By default symlinks are not followed, so a link inside a root that points outside
    still counts as inside; pass ``follow_symlinks=True`` to compare real paths on this
    machine (``os.path.realpath``) before opening anything. Comparison is
    case-sensitive, which on a case-insensitive file system errs towards ``False``.
    Roots that are not local file URIs contain nothing. Paths are POSIX paths; Windows
    drive letters are not interpreted.
    """
    target = os.fspath(path)
    if not isinstance(target, str) or not target.startswith("/"):
        raise ValueError("path must be an absolute POSIX path")
    if "\x00" in target:
        raise ValueError("path must not contain NUL")
    if follow_symlinks:
        target = os.path.realpath(target)
    wanted = _normalise(target.split("/"))
    for uri in _uris(roots):
        try:
            base = root_path(uri)
        except ValueError:
            continue
        if follow_symlinks:
            base = os.path.realpath(base)
        segments = _normalise(base.split("/"))
        if wanted[: len(segments)] == segments:
            return True
    return False


def _uris(roots: ListRootsResult | Iterable[Root | Mapping[str, Any] | str]) -> list[str]:
    if isinstance(roots, ListRootsResult):
        return [root.uri for root in roots.roots]
    if isinstance(roots, str | bytes | Mapping):
        raise TypeError("roots must be a ListRootsResult or an iterable of roots")
    uris: list[str] = []
    for root in roots:
        uri: object = root
        if isinstance(root, Root):
            uri = root.uri
        elif isinstance(root, Mapping):
            uri = root.get("uri")
        if not isinstance(uri, str):
            raise TypeError("each root must be a Root, an object with a string uri, or a str")
        uris.append(uri)
    return uris


def _normalise(segments: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for segment in segments:
        if segment in ("", "."):
            continue
        if segment == "..":
            if out:
                out.pop()
            continue
        out.append(segment)
    return tuple(out)


def _join(segments: tuple[str, ...]) -> str:
    return "/" + "/".join(segments)
