"""The Skills extension for clients: a server's skills listed and got, and their files
read only as their entry describes them (``SkillsClient(client)``).

A skill entry (``skills/list``, ``skills/get``) is a complete manifest: the URI of its
``SKILL.md``, its frontmatter, and every file with its ``sha256:`` digest and size (or
``"dynamic"``, which promises nothing). The client checks each entry when it arrives:
an entry whose URI does not end in ``<name>/SKILL.md``, whose files lie outside the
skill's directory (a segment that, percent-decoded, is empty, ``.`` or ``..``, or holds
a slash, counts as outside), or whose manifest leaves out ``SKILL.md`` is a
``ProtocolViolation`` (the specification says such an entry must not be loaded). A
``SKILL.md``'s frontmatter is parsed within bounds (``snodo.extensions.skills.frontmatter``:
its size, and its aliases expanded), so a few hundred bytes cannot hold the check up.

``read_skill_file(skill, path)`` reads one file through ``resources/read`` and returns
its bytes only when they are the bytes the entry described: a file the entry does not
list, a size or digest that differs, or a ``SKILL.md`` whose frontmatter is not the
entry's, is ``VerificationFailed``, and the content is never returned (it may be stale,
corrupted or tampered with; ``get_skill`` again gives the current entry). A read served
from the client's response cache that fails is read again once from the server, since
only the cached copy may be stale. Digests prove consistency with the entry, not trust:
both come from the same server.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote

from pydantic import BaseModel

from snodo.client import Client
from snodo.client.errors import ClientError, ProtocolViolation, RequestError
from snodo.client.extensions import ClientExtension
from snodo.client.listings import Listed, every_page
from snodo.client.results import validated
from snodo.core.errors import ErrorCode
from snodo.extensions.skills.frontmatter import load_bounded
from snodo.revisions.skills import Skill
from snodo.revisions.skills.protocol import EXTENSION_ID

__all__ = [
    "EXTENSION_ID",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "SkillFile",
    "SkillsClient",
    "VerificationFailed",
    "check_entry",
    "file_uri",
    "frontmatter_of",
    "skill_root",
    "verified",
]

MAX_SKILL_FILES: Final = 512
"""The files per skill every host must accept (more is the host's choice)."""
MAX_SKILL_BYTES: Final = 16 * 1024 * 1024
"""The total size of a skill's files every host must accept."""

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_SKILL_MD = "/SKILL.md"
_FRONTMATTER = re.compile(r"\A(?:\ufeff)?---\r?\n(.*?)\r?\n---(?:\r?\n|\Z)", re.DOTALL)


class VerificationFailed(ClientError):
    """A skill's file read is not what the skill's entry describes (a digest, size or
    frontmatter that differs, or a file the entry does not list): its content is not
    returned. ``uri`` names the file; ``reason`` says what differs."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"{uri}: {reason}; the content was refused")
        self.uri = uri
        self.reason = reason


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One verified file of a skill: its URI, its bytes and MIME type; ``text`` is the
    bytes as UTF-8 (None when they are not)."""

    uri: str
    content: bytes
    mime_type: str | None
    verified: bool
    """Whether digest and size were checked (False only for a ``"dynamic"`` skill)."""

    @property
    def text(self) -> str | None:
        """The content as UTF-8 text; None when it is not."""
        try:
            return self.content.decode("utf-8")
        except UnicodeDecodeError:
            return None


def plain(entry: Any) -> dict[str, Any]:
    """An entry (the wire model, or its JSON) as JSON (a frontmatter field that is null
    stays: it is one the author wrote)."""
    if isinstance(entry, BaseModel):
        dumped: dict[str, Any] = entry.model_dump(mode="json", by_alias=True)
        return dumped
    if isinstance(entry, Mapping):
        return dict(entry)
    raise TypeError(f"not a skill entry: {type(entry).__name__}")


def skill_root(uri: str) -> str:
    """The skill's directory URI: its ``SKILL.md`` URI without ``/SKILL.md``."""
    if not uri.endswith(_SKILL_MD) or len(uri) == len(_SKILL_MD):
        raise ValueError(f"{uri!r} is not the URI of a SKILL.md")
    return uri[: -len(_SKILL_MD)]


def file_uri(entry: Any, path: str | None = None) -> str:
    """The URI of the file ``path`` of the skill (a path relative to the skill's root,
    or a full URI); None: its ``SKILL.md``."""
    uri = str(plain(entry)["uri"])
    if path is None:
        return uri
    if "://" in path:
        return path
    relative = path.lstrip("/")
    if not relative or not all(_plain(part) for part in relative.split("/")):
        raise ValueError(f"{path!r} is not a file path within the skill")
    return f"{skill_root(uri)}/{relative}"


def _decoded(segment: str) -> str:
    """``segment`` percent-decoded until nothing changes (``%252e`` is ``.`` to a host
    that decodes twice)."""
    while True:
        decoded = unquote(segment, errors="surrogateescape")
        if decoded == segment:
            return segment
        segment = decoded


def _plain(segment: str) -> bool:
    """Whether a path segment, decoded, names one entry in its directory: not empty,
    ``.`` or ``..``, and without a slash, backslash or NUL (which a host mapping URIs
    to files would follow elsewhere)."""
    name = _decoded(segment)
    return name not in ("", ".", "..") and not any(c in name for c in "/\\\0")


def inside(root: str, uri: str) -> bool:
    """Whether ``uri`` names a file below the skill directory ``root``, every segment
    of its path there ``_plain``."""
    if not uri.startswith(root + "/"):
        return False
    return all(_plain(part) for part in uri[len(root) + 1 :].split("/"))


def check_entry(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` (an entry's JSON) when it may be loaded, else ProtocolViolation."""
    uri = raw.get("uri")
    frontmatter = raw.get("frontmatter")
    if not isinstance(uri, str) or not isinstance(frontmatter, Mapping):
        raise ProtocolViolation("a skill entry without a uri or frontmatter")
    try:
        root = skill_root(uri)
    except ValueError as exc:
        raise ProtocolViolation(f"skill entry: {exc}") from None
    place = root.partition("://")[2]
    if not place or not all(_plain(part) for part in place.split("/")):
        raise ProtocolViolation(f"skill entry {uri!r}: a path segment that is not a name")
    name = frontmatter.get("name")
    if not isinstance(name, str) or root.rsplit("/", 1)[-1] != name:
        raise ProtocolViolation(
            f"skill entry {uri!r}: the last segment of its path is not its name {name!r}"
        )
    if not isinstance(frontmatter.get("description"), str):
        raise ProtocolViolation(f"skill entry {uri!r}: its frontmatter has no description")
    resources = raw.get("resources")
    if resources == "dynamic":
        return dict(raw)
    if not isinstance(resources, list):
        raise ProtocolViolation(f"skill entry {uri!r}: resources is neither a list nor 'dynamic'")
    seen: set[str] = set()
    for item in resources:
        if not isinstance(item, Mapping):
            raise ProtocolViolation(f"skill entry {uri!r}: a resource that is not an object")
        listed, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        if not isinstance(listed, str) or not (listed == uri or inside(root, listed)):
            raise ProtocolViolation(f"skill entry {uri!r}: lists {listed!r}, outside the skill")
        if listed in seen:
            raise ProtocolViolation(f"skill entry {uri!r}: lists {listed!r} twice")
        seen.add(listed)
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise ProtocolViolation(f"skill entry {uri!r}: {listed!r} has no sha256: digest")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ProtocolViolation(f"skill entry {uri!r}: {listed!r} has no size")
    if uri not in seen:
        raise ProtocolViolation(f"skill entry {uri!r}: its resources leave out its SKILL.md")
    return dict(raw)


def listed_file(entry: Mapping[str, Any], uri: str) -> Mapping[str, Any] | None:
    """The entry's record of ``uri`` (None for a dynamic skill); VerificationFailed when
    the entry does not list it, or it lies outside a dynamic skill."""
    resources = entry["resources"]
    if resources == "dynamic":
        if uri != entry["uri"] and not inside(skill_root(entry["uri"]), uri):
            raise VerificationFailed(uri, "it is not a file of the skill")
        return None
    for item in resources:
        if item["uri"] == uri:
            found: Mapping[str, Any] = item
            return found
    raise VerificationFailed(uri, "the skill's entry does not list it")


def content_bytes(contents: Any, uri: str) -> tuple[bytes, str | None]:
    """The raw bytes ``resources/read`` gave for ``uri`` (text as UTF-8, a blob
    decoded), and its MIME type."""
    items = [c for c in contents if isinstance(c, Mapping) and c.get("uri") == uri]
    if len(items) != 1:
        raise ProtocolViolation(f"resources/read of {uri!r} gave {len(items)} contents for it")
    item = items[0]
    mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else None
    if isinstance(item.get("text"), str):
        return item["text"].encode("utf-8"), mime
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True), mime
        except (binascii.Error, ValueError):
            raise ProtocolViolation(
                f"resources/read of {uri!r}: a blob that is not base64"
            ) from None
    raise ProtocolViolation(f"resources/read of {uri!r}: contents without text or blob")


def verified(entry: Mapping[str, Any], uri: str, content: bytes) -> bool:
    """Check ``content`` read from ``uri`` against the entry: size and digest, and for
    ``SKILL.md`` its frontmatter. True when digest and size were checked, False for a
    dynamic skill; VerificationFailed on any difference."""
    listed = listed_file(entry, uri)
    if listed is not None:
        if len(content) != listed["size"]:
            raise VerificationFailed(
                uri, f"{len(content)} bytes where the entry says {listed['size']}"
            )
        digest = "sha256:" + hashlib.sha256(content).hexdigest()
        if digest != listed["digest"]:
            raise VerificationFailed(
                uri, f"digest {digest} where the entry says {listed['digest']}"
            )
    if uri == entry["uri"]:
        _same_frontmatter(entry["frontmatter"], content, uri)
    return listed is not None


def frontmatter_of(content: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ``SKILL.md``'s YAML frontmatter read two ways: typed as YAML types it (dates
    as ISO text) and with every scalar as written (text); ValueError when it has none."""
    try:
        import yaml  # noqa: PLC0415 - optional dependency (snodo[skills])
    except ImportError:
        raise ImportError(
            "checking a SKILL.md's frontmatter needs the snodo[skills] extra:"
            " pip install 'snodo[skills]'"
        ) from None

    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("SKILL.md is not UTF-8 text") from None
    match = _FRONTMATTER.match(text)
    if match is None:
        raise ValueError("SKILL.md does not begin with YAML frontmatter")
    # Within bounds (size, aliases, nesting): a few hundred bytes of aliases must not
    # become a value that takes minutes to compare.
    typed = load_bounded(match.group(1), yaml.SafeLoader)
    written = load_bounded(match.group(1), yaml.BaseLoader)  # BaseLoader: text only
    if not isinstance(typed, dict) or not isinstance(written, dict):
        raise ValueError("its frontmatter is not a mapping")
    return _json(typed), written


def _json(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    return value


def _same_frontmatter(expected: Mapping[str, Any], content: bytes, uri: str) -> None:
    """Field by field: each field of the file equals the entry's, as YAML types it or
    as written (servers render scalars either way), and neither has a field the other
    lacks."""
    try:
        typed, written = frontmatter_of(content)
    except ValueError as exc:
        raise VerificationFailed(uri, str(exc)) from None
    fields = set(expected) | set(typed)
    for field in sorted(fields):
        if field not in expected or field not in typed:
            raise VerificationFailed(uri, f"frontmatter field {field!r} differs from the entry")
        given = expected[field]
        if given != typed[field] and given != written.get(field):
            raise VerificationFailed(uri, f"frontmatter field {field!r} differs from the entry")


class SkillsClient(ClientExtension):
    """A client's skills: ``SkillsClient(client)`` declares the extension at ``client``
    and lists, gets and reads the skills of its server. Each method asks
    ``server/discover`` (cached) first: a server that does not declare the extension is
    sent no skills request."""

    def __init__(self, client: Client) -> None:
        super().__init__(EXTENSION_ID)
        self.client = client
        client.add_extension(self)

    async def list_skills(self, *, cursor: str | None = None, page: bool = False) -> Listed[Skill]:
        """Every skill entry the server lists, following cursors; with ``cursor`` (or
        ``page=True`` for the first) that one page, whose ``next_cursor`` says where the
        next begins. Each entry is checked (``check_entry``). Empty when the server does
        not declare the extension (a listing never proves a server has no skill:
        ``get_skill`` takes a URI from anywhere)."""
        client = self.client
        if not await client.server_supports(EXTENSION_ID):
            return Listed()
        if cursor is None and not page:

            async def fetch(params: dict[str, Any]) -> dict[str, Any]:
                return await client.request("skills/list", params)

            found = await every_page(fetch, "skills/list", "skills", client.limits)
            return Listed(_entry(raw) for raw in found).hinted(found.ttl_ms, found.cache_scope)
        result = await client.request("skills/list", {} if cursor is None else {"cursor": cursor})
        raw_page = result.get("skills")
        if not isinstance(raw_page, list):
            raise ProtocolViolation("skills/list: skills is not a list")
        listed: Listed[Skill] = Listed(_entry(raw) for raw in raw_page)
        following = result.get("nextCursor")
        if following is not None and not isinstance(following, str):
            raise ProtocolViolation("skills/list: nextCursor is not a string")
        listed.next_cursor = following
        ttl = result.get("ttlMs")
        scope = "public" if result.get("cacheScope") == "public" else "private"
        return listed.hinted(ttl if isinstance(ttl, int) and ttl > 0 else 0, scope)

    async def get_skill(self, uri: str) -> Skill:
        """The entry of the skill whose ``SKILL.md`` is at ``uri``: -32602 from the
        server when it serves none there; -32601, sent nothing, when it does not declare
        the extension."""
        if not await self.client.server_supports(EXTENSION_ID):
            raise RequestError(
                int(ErrorCode.METHOD_NOT_FOUND), f"the server does not declare {EXTENSION_ID}"
            )
        result = await self.client.request("skills/get", {"uri": uri})
        entry = _entry(result.get("skill"))
        if entry.uri != uri:
            raise ProtocolViolation(f"skills/get {uri!r} answered the skill {entry.uri!r}")
        return entry

    async def read_skill_file(
        self, skill: Skill | Mapping[str, Any], path: str | None = None
    ) -> SkillFile:
        """The file ``path`` of the skill (relative to its root, or a full URI; None: its
        ``SKILL.md``), read with ``resources/read`` and returned only when it is what
        the entry ``skill`` says (``verified``); else ``VerificationFailed``."""
        entry = check_entry(plain(skill))
        uri = file_uri(entry, path)
        listed_file(entry, uri)  # an unlisted file is not even read
        cache = self.client.cache
        hits = cache.hits if cache is not None else 0
        for attempt in range(2):
            content, mime = content_bytes(await self._contents(uri), uri)
            try:
                checked = verified(entry, uri, content)
            except VerificationFailed:
                if attempt or cache is None or cache.hits == hits:
                    raise
                # Only the kept copy may be stale: read it once more from the server.
                cache.notified(
                    self.client.origin,
                    {"method": "notifications/resources/updated", "params": {"uri": uri}},
                )
                continue
            return SkillFile(uri, content, mime, checked)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _contents(self, uri: str) -> list[Any]:
        result = await self.client.read_resource(uri)
        if isinstance(result, BaseModel):
            return list(plain(result).get("contents") or [])
        return list(getattr(result, "contents", None) or [])


def _entry(raw: Any) -> Skill:
    """A server's entry as the wire model, once it fits and may be loaded."""
    if not isinstance(raw, Mapping):
        raise ProtocolViolation("a skill entry that is not an object")
    return validated(Skill, check_entry(raw))
