"""The Skills extension for servers (``EXTENSION_ID``): folders of instructions a server
publishes over its resources.

``skills = Skills(server, "skills/")`` serves every skill folder under the roots
(``snodo.extensions.skills.files`` reads and checks them at start): each file a resource
``skill://<skill-path>/<file>`` read with ``resources/read``, and the extension's
methods offered through the public extension API (``Server.add_extension``), in both
eras: ``skills/list`` (paged like the core lists; each entry the frontmatter as
written and the complete manifest of digests and sizes), ``skills/get`` (-32602 for a
URI that is not a served skill's ``SKILL.md``) and, with ``directory_read``,
``resources/directory/read`` over every directory of the served files. A skill made
by code (``@skills.skill(path, description=...)``) has its ``SKILL.md`` written on each
read, so its entry's ``resources`` is ``"dynamic"``. With ``reload=True`` a change
under the roots is read again before the next skills request; a change that breaks a
skill is logged and the previous skills stay served.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

from snodo.core.caching import CacheHint
from snodo.core.errors import InvalidParams
from snodo.extensions.skills.files import (
    NotServable,
    SkillError,
    SkillFile,
    SkillFolder,
    check_name,
    directories,
    scan,
)
from snodo.revisions.skills.models import GetSkillRequestParams, ReadResourceDirectoryRequestParams
from snodo.revisions.skills.protocol import (
    DIRECTORY_MIME_TYPE,
    DYNAMIC_RESOURCES,
    EXTENSION_ID,
    SKILL_FILE,
    SKILL_MIME_TYPE,
)
from snodo.server.extensions import Extension, ExtensionMethod
from snodo.server.pagination import page

if TYPE_CHECKING:
    from snodo.core.context import Context
    from snodo.server import Server

__all__ = ["EXTENSION_ID", "DynamicSkill", "Roots", "SkillError", "Skills", "dynamic_skill"]

log = logging.getLogger("snodo")

Roots = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
"""One folder of skills, or several."""

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class DynamicSkill:
    """A skill made by code: its frontmatter is fixed, its ``SKILL.md`` body is what
    ``function`` returns on each read."""

    path: str
    uri: str
    frontmatter: dict[str, Any]
    function: Callable[[], Any]


def _roots(given: Roots) -> list[Path]:
    if isinstance(given, str | os.PathLike):
        return [Path(given)]
    return [Path(item) for item in given]


def _signature(roots: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    """What a change under the roots changes: every file's path, mtime and size."""
    seen: list[tuple[str, int, int]] = []
    for root in roots:
        for base, dirs, names in os.walk(root):
            dirs[:] = sorted(dirs)
            for name in sorted(names):
                try:
                    info = os.stat(os.path.join(base, name))
                except OSError:
                    continue
                seen.append((os.path.join(base, name), info.st_mtime_ns, info.st_size))
    return tuple(seen)


def _contents(data: bytes) -> str | bytes:
    """Text when the bytes are UTF-8 (so a client's digest of the text's UTF-8 is the
    file's), else a blob."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


class Skills(Extension):
    """The skills ``server`` serves: the folders under ``roots`` (more with
    ``add_roots``) and skills made by code (``skill``). A folder that breaks the Agent
    Skills rules or the extension's limits stops start-up here with ``SkillError``
    naming it. ``reload``: read the folders again when they change (for development).
    ``directory_read``: offer ``resources/directory/read``. ``cache``: the
    ``ttlMs``/``cacheScope`` of skills/list and skills/get (else the server's list and
    read hints). One per server: the extension is offered at ``server`` once."""

    def __init__(
        self,
        server: Server,
        roots: Roots | None = None,
        *,
        reload: bool = False,
        directory_read: bool = True,
        cache: CacheHint | None = None,
    ) -> None:
        super().__init__(EXTENSION_ID, {"directoryRead": True} if directory_read else {})
        self.server = server
        self.roots: list[Path] = []
        self.reload = False
        self.cache = cache
        self.folders: tuple[SkillFolder, ...] = ()
        self.dynamic: dict[str, DynamicSkill] = {}
        self._served: dict[str, SkillFile] = {}
        self._signature: tuple[tuple[str, int, int], ...] = ()
        self._lock = threading.Lock()
        methods: list[tuple[str, Any, Callable[..., Any]]] = [
            ("skills/list", None, self.list_skills),
            ("skills/get", GetSkillRequestParams, self.get_skill),
        ]
        if directory_read:  # a core namespace: registered as the tasks extension's are
            methods.append(
                ("resources/directory/read", ReadResourceDirectoryRequestParams, self.read_dir)
            )
        for method, model, handler in methods:
            cacheable = method.startswith("skills/")
            self.methods[method] = ExtensionMethod(method, model, handler, cacheable=cacheable)
        server.add_extension(self)
        if roots is not None:
            self.add_roots(roots, reload=reload)

    # -- what is served ------------------------------------------------------------------

    def add_roots(self, roots: Roots, *, reload: bool) -> None:
        """Serve the skills under ``roots`` as well; SkillError for one that cannot be."""
        wanted = [*self.roots, *_roots(roots)]
        signature = _signature(wanted)
        folders = scan(wanted)
        clash = sorted({f.uri for f in folders} & set(self.dynamic))
        if clash:
            raise SkillError(f"{clash[0]} is served by code already")
        self.roots, self.reload = wanted, self.reload or reload
        self._install(folders, signature)

    def skill(
        self, path: str, *, description: str, frontmatter: Mapping[str, Any] | None = None
    ) -> Callable[[F], F]:
        """``@skills.skill("reports/daily", description=...)``: a skill made by code; the
        function (sync or async, no arguments) returns its ``SKILL.md`` body on each
        read, after the frontmatter (``name`` from the path's last segment,
        ``description``, and ``frontmatter``'s other fields). Its entry's ``resources``
        is ``"dynamic"``: there is no stable content to publish digests of."""

        def register(function: F) -> F:
            meta = {**dict(frontmatter or {}), "description": description}
            self.add_dynamic(dynamic_skill(path, function, meta))
            return function

        return register

    def add_dynamic(self, skill: DynamicSkill) -> None:
        """Serve a skill made by code; SkillError if its URI is served already."""
        if skill.uri in self.dynamic or any(f.uri == skill.uri for f in self.folders):
            raise SkillError(f"{skill.uri} is served already")
        self.dynamic[skill.uri] = skill
        description = skill.frontmatter["description"]

        async def read() -> str:
            body = skill.function()
            if inspect.isawaitable(body):
                body = await body
            if not isinstance(body, str):
                raise TypeError(f"skill {skill.path} must return its SKILL.md body as str")
            return _document(skill.frontmatter) + body

        self.server.add_resource(
            read,
            skill.uri,
            name=skill.frontmatter["name"],
            description=description,
            mime_type=SKILL_MIME_TYPE,
        )

    def _install(self, folders: tuple[SkillFolder, ...], signature: Any) -> None:
        served = {file.uri: file for folder in folders for file in folder.files}
        for uri in set(self._served) - set(served):
            self.server.remove_resource(uri)
        described = {folder.uri: folder.frontmatter for folder in folders}
        for uri, file in served.items():
            if self._served.get(uri) == file:
                continue
            meta = described.get(uri)
            self.server.add_resource(
                _reader(file),
                uri,
                name=meta["name"] if meta else uri.rsplit("/", 1)[-1],
                description=meta["description"] if meta else None,
                mime_type=file.mime_type,
                size=file.size,
            )
        self.folders, self._served, self._signature = folders, served, signature

    def refresh(self) -> None:
        """With ``reload``, read the roots again if anything under them changed."""
        if not self.reload:
            return
        with self._lock:
            signature = _signature(self.roots)
            if signature == self._signature:
                return
            try:
                folders = scan(self.roots)
            except SkillError as exc:
                log.error("skills not reloaded, the previous ones stay served: %s", exc)
                self._signature = signature
                return
            self._install(folders, signature)
            log.info("skills reloaded: %d served", len(folders))

    # -- entries -------------------------------------------------------------------------

    def entries(self) -> list[dict[str, Any]]:
        """Every served skill's entry (``Skill`` on the wire), by URI."""
        found = [_entry(folder) for folder in self.folders]
        found += [
            {"uri": s.uri, "frontmatter": s.frontmatter, "resources": DYNAMIC_RESOURCES}
            for s in self.dynamic.values()
        ]
        return sorted(found, key=lambda entry: entry["uri"])

    def _hint(self, method: str) -> dict[str, Any]:
        hint = self.cache or self.server.cache.get(method)
        return {} if hint is None else {"ttlMs": hint.ttl_ms, "cacheScope": hint.scope}

    # -- the methods ---------------------------------------------------------------------

    def list_skills(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        """``skills/list``: one page of entries, and the listing's caching hint."""
        self.refresh()
        shown, after = page(self.entries(), "skills/list", params.get("cursor"), self.page_size)
        result: dict[str, Any] = {"skills": list(shown), **self._hint("resources/list")}
        if after is not None:
            result["nextCursor"] = after
        return result

    def get_skill(self, ctx: Context, params: GetSkillRequestParams) -> dict[str, Any]:
        """``skills/get``: the entry of the skill whose ``SKILL.md`` is ``params.uri``."""
        self.refresh()
        for entry in self.entries():
            if entry["uri"] == params.uri:
                return {"skill": entry, **self._hint("resources/read")}
        raise InvalidParams(f"No skill is served at {params.uri}")

    def read_dir(self, ctx: Context, params: ReadResourceDirectoryRequestParams) -> dict[str, Any]:
        """``resources/directory/read``: one page of a directory's direct children."""
        self.refresh()
        uri = params.uri
        files = [*self._served, *self.dynamic]
        children = directories(files).get(uri)
        if children is None:
            if uri in files:
                raise InvalidParams(f"{uri} is not a directory resource")
            raise InvalidParams(f"No directory resource is served at {uri}")
        listed = [self._child(child, file) for child, file in sorted(children.items())]
        cursor = params.cursor if isinstance(params.cursor, str) else None
        shown, after = page(listed, "resources/directory/read", cursor, self.page_size)
        result: dict[str, Any] = {"resources": list(shown)}
        if after is not None:
            result["nextCursor"] = after
        return result

    def _child(self, uri: str, file: str | None) -> dict[str, Any]:
        name = uri.rsplit("/", 1)[-1]
        if file is None:
            return {"uri": uri, "name": name, "mimeType": DIRECTORY_MIME_TYPE}
        resource = self.server.registry.resources.get(uri)
        return dict(resource.definition) if resource is not None else {"uri": uri, "name": name}

    @property
    def page_size(self) -> int | None:
        """The server's page size, which the skills listing and directories page by."""
        return self.server.page_size


def _reader(file: SkillFile) -> Callable[[], str | bytes]:
    """Reads ``file`` for ``resources/read``: its bytes only while they are what the
    catalog lists, reached through no link (``SkillFile.read``). No refresh here: reads
    run on worker threads and the registry changes on the event loop only (the skills
    methods refresh), so a file changed since the scan is refused until then."""

    def read() -> str | bytes:
        try:
            return _contents(file.read())
        except NotServable as exc:
            log.warning("skills: %s not served: %s", file.path, exc)
            raise InvalidParams(f"{file.uri} is not as its skill lists it") from None
        except OSError:
            raise InvalidParams(f"{file.uri} is no longer served") from None

    return read


def _entry(folder: SkillFolder) -> dict[str, Any]:
    manifest = [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in folder.files]
    return {"uri": folder.uri, "frontmatter": folder.frontmatter, "resources": manifest}


def _document(frontmatter: Mapping[str, Any]) -> str:
    """A ``SKILL.md``'s frontmatter block, which reads back as ``frontmatter``."""
    import yaml  # noqa: PLC0415  (the skills extra)

    dumped = yaml.safe_dump(dict(frontmatter), sort_keys=False, allow_unicode=True)
    return f"---\n{dumped}---\n\n"


def dynamic_skill(
    path: str, function: Callable[[], Any], frontmatter: Mapping[str, Any]
) -> DynamicSkill:
    """A ``DynamicSkill`` at ``path`` (``prefix/.../name``), its frontmatter checked."""
    parts = path.strip("/").split("/")
    name = check_name(parts[-1], f"skill {path!r}")
    if any(not part or quote(part, safe="-._~") != part for part in parts):
        raise SkillError(f"skill {path!r}: each segment of its path must be URI-safe")
    meta = {"name": name, **{k: v for k, v in frontmatter.items() if k != "name"}}
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError(f"skill {path!r} needs a description")
    skill_path = "/".join(parts)
    return DynamicSkill(skill_path, f"skill://{skill_path}/{SKILL_FILE}", meta, function)
