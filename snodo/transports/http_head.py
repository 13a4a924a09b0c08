"""What a Streamable HTTP request's head can be refused for, before its body is read.

The head is read once into a dict of lower-case names (a repeated header's values
joined with ", ", RFC 9110 5.3, so a mirrored header sent twice never matches the
body), then checked in the order docs/request-checks.md gives: the path, ``Host`` and
``Origin`` against DNS rebinding (basic/transports/streamable-http.mdx, "Security
Warning"), the method, ``Content-Type``, ``Accept`` and a declared body size. Each
failed check is a plain HTTP answer; nothing here sees JSON.

Every request passes here, so the usual head (a plain allowed host name with a port,
the exact content type) is decided without a regular expression; anything else takes
the full parse of ``snodo.core.http_headers.host_name``, and either way the verdict is the
same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from snodo.core.http_headers import host_name
from snodo.legacy.http import SESSION_HEADER

__all__ = ["HeadRules", "Plain", "read_headers"]

JSON = "application/json"
SSE = "text/event-stream"


@dataclass(frozen=True, slots=True)
class Plain:
    """An HTTP answer that is not JSON-RPC: a status, a short body, extra headers."""

    status: int
    body: bytes = b""
    content_type: bytes = b"text/plain; charset=utf-8"
    extra: tuple[tuple[bytes, bytes], ...] = ()


MAX_KNOWN_NAMES = 256
"""Header names whose lower-case text is kept, in the order first seen: the dozen every
client sends are decoded once per process, and names made up by a peer cannot grow it
past this."""
_NAMES: dict[bytes, str] = {}
_COMPILED: Final = not __file__.endswith(".py")
"""Whether this module runs compiled (setup.py), which ``read_headers`` reads by."""
MAX_KNOWN_HOSTS = 64
"""Host header values whose verdict each ``HeadRules`` keeps; others are checked anew."""


def read_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Lower-case names to values; a repeated header's values joined with ", ", in order.

    Linear in the number of lines: values of a repeated name are collected, then joined
    once.
    """
    if not _COMPILED and type(raw) is list:
        usual = _read_usual(raw)
        if usual is not None:
            return usual
    headers: dict[str, str] = {}
    repeated: dict[str, list[str]] | None = None
    for raw_name, raw_value in raw:
        name = _NAMES.get(raw_name)
        if name is None:
            name = raw_name.decode("latin-1").lower()
            if len(_NAMES) < MAX_KNOWN_NAMES:
                _NAMES[raw_name] = name
        value = raw_value.decode("latin-1")
        if name not in headers:
            headers[name] = value
            continue
        if repeated is None:
            repeated = {}
        repeated.setdefault(name, [headers[name]]).append(value)
    if repeated is not None:
        for name, values in repeated.items():
            headers[name] = ", ".join(values)
    return headers


def _read_usual(raw: list[tuple[bytes, bytes]]) -> dict[str, str] | None:
    """``read_headers`` of the usual head, each name known and none repeated, in one
    comprehension; None for any other. Interpreted, a comprehension costs less than the
    loop; compiled, the loop is native and costs less than this, so it is not called."""
    try:
        headers = {_NAMES[name]: value.decode("latin-1") for name, value in raw}
    except (KeyError, AttributeError, ValueError):
        return None
    return headers if len(headers) == len(raw) else None


def _plain_port(port: str) -> bool:
    """What ``host_name`` accepts after the colon: 1-5 ASCII digits, at most 65535."""
    return 0 < len(port) <= 5 and port.isascii() and port.isdigit() and int(port) <= 65535


class HeadRules:
    """The head checks of one ``HttpApp``, with its allow-lists."""

    def __init__(
        self,
        path: str | None,
        allowed_hosts: Iterable[str] | None,
        allowed_origins: Iterable[str] | None,
        max_body_bytes: int,
        sessions: bool,
    ) -> None:
        self.path = None if path is None else path.rstrip("/")
        self.allowed_hosts = (
            None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
        )
        # Names ``host_name`` returns unchanged: a Host header naming one of them, with
        # at most a port, is allowed without the full parse.
        self.plain_hosts = frozenset(
            h for h in self.allowed_hosts or () if host_name(h) == h and "[" not in h
        )
        self.allowed_origins = None if allowed_origins is None else frozenset(allowed_origins)
        self.cors_origins: frozenset[str] = frozenset()
        """Browser origins allowed besides (``HttpApp(cors_origins=...)``)."""
        self.max_body_bytes = max_body_bytes
        self.max_body_digits = len(str(max_body_bytes))
        """A declared length with fewer digits is within the limit, unparsed."""
        self.host_verdicts: dict[str, bool] = {}
        """``host_allowed`` by Host header, for the MAX_KNOWN_HOSTS first seen: a client
        sends the same one on every request."""
        self.sessions = sessions
        """Legacy sessions are served: a GET or DELETE naming one passes."""

    def host_allowed(self, authority: str) -> bool:
        verdict = self.host_verdicts.get(authority)
        if verdict is None:
            verdict = self._host_allowed(authority)
            if len(self.host_verdicts) < MAX_KNOWN_HOSTS:
                self.host_verdicts[authority] = verdict
        return verdict

    def _host_allowed(self, authority: str) -> bool:
        if self.allowed_hosts is None:
            return True
        name, colon, port = authority.partition(":")
        if name in self.plain_hosts and (not colon or _plain_port(port)):
            return True
        host = host_name(authority)
        return host is not None and host in self.allowed_hosts

    def origin_allowed(self, origin: str) -> bool:
        if origin in self.cors_origins:
            return True
        if self.allowed_origins is not None:
            return origin in self.allowed_origins
        if self.allowed_hosts is None:
            return True
        scheme, _, authority = origin.partition("://")
        host = host_name(authority)
        return scheme in ("http", "https") and host is not None and host in self.allowed_hosts

    def refuse(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> Plain | None:
        """The answer refusing this head, or None when the body may be read."""
        path = scope["path"]
        if self.path is not None and path != self.path and path.rstrip("/") != self.path:
            return Plain(404, b"not found")
        host = headers.get("host", "")
        allowed = self.host_verdicts.get(host)  # host_allowed's kept verdict, read here
        if not (self.host_allowed(host) if allowed is None else allowed):
            return Plain(421, b"misdirected request: host not allowed")
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin):
            return Plain(403, b"forbidden: origin not allowed")
        method = scope["method"]
        if method != "POST":
            if self.sessions and method in ("GET", "DELETE") and SESSION_HEADER in headers:
                return None  # a legacy session's stream, or its end
            return Plain(405, b"method not allowed", extra=((b"allow", b"POST"),))
        kind = headers.get("content-type", "")
        if kind != JSON and kind.split(";")[0].strip().lower() != JSON:
            return Plain(415, b"content type must be application/json")
        accept = headers.get("accept", "*/*")
        if JSON not in accept and SSE not in accept and "*/*" not in accept:
            return Plain(406, b"accept application/json or text/event-stream")
        length = headers.get("content-length")
        if (
            length is not None
            and len(length) >= self.max_body_digits
            and length.isdigit()
            and int(length) > self.max_body_bytes
        ):
            return Plain(413, b"request body too large")
        return None
