"""Skill folders read from disk: every folder under a root that holds a ``SKILL.md`` is a
skill (the Agent Skills format, as the Skills extension delegates it).

``scan(roots)`` reads them once and checks what the extension asks of a server before it
serves anything, so that a broken skill stops start-up with the folder named: the
frontmatter (YAML, a mapping with ``name`` and ``description``), the name rules and the
name equal to the folder's, URI-safe paths, no file reached through a link out of its
root, and the per-skill limits (512 files, 16 MiB, nested skills' files counted in the
enclosing skill as the manifest lists them). Each file gets its ``sha256:`` digest, size
and MIME type (``text/markdown`` for ``SKILL.md``, by name or else by content for the
rest). Hidden files and folders (a leading dot) and ``__pycache__`` are not part of a
skill. Files are read as ``snodo.extensions.skills.reading`` reads them (no link followed,
regular files only, bounded), at the scan as on each later read, and the frontmatter
is parsed within ``snodo.extensions.skills.frontmatter``'s bounds.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from snodo.extensions.skills.frontmatter import load_bounded
from snodo.extensions.skills.reading import NotServable, read_within
from snodo.revisions.skills.protocol import DIGEST_PREFIX, SKILL_FILE, SKILL_MIME_TYPE

__all__ = [
    "MAX_FILES",
    "MAX_TOTAL_BYTES",
    "NotServable",
    "SkillError",
    "SkillFile",
    "SkillFolder",
    "check_name",
    "directories",
    "frontmatter",
    "mime_type",
    "scan",
    "stamp",
]

MAX_FILES = 512
"""Resources per skill, ``SKILL.md`` included (the extension's "Limits")."""
MAX_TOTAL_BYTES = 16 * 1024 * 1024
"""The sum of the sizes of a skill's files (the extension's "Limits")."""

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SKIPPED = frozenset({"__pycache__"})
_SNIFFED = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
)
_BY_SUFFIX = {".md": "text/markdown", ".py": "text/x-python", ".sh": "text/x-shellscript"}


class SkillError(ValueError):
    """A skill folder the server cannot serve; the message names the folder."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill: where it is, what it is called on the wire, and its digest."""

    uri: str
    path: Path
    mime_type: str
    size: int
    digest: str
    root: Path = Path()
    """The skills root, resolved; ``parts`` lead from it to the file through no link."""
    parts: tuple[str, ...] = ()

    def read(self) -> bytes:
        """The file's bytes now, when they are still the ones listed (size and digest);
        else ``NotServable`` (``OSError`` when it is gone)."""
        data = read_within(self.root, self.parts, self.size)
        if stamp(data) != (self.digest, self.size):
            raise NotServable("changed since the skills were read")
        return data


@dataclass(frozen=True, slots=True)
class SkillFolder:
    """A skill read from disk: its path in the skill namespace, its frontmatter as
    written, and its files (``SKILL.md`` first, then by URI)."""

    path: str
    uri: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]


def check_name(name: object, where: str) -> str:
    """The Agent Skills name rules: 1 to 64 lowercase letters, digits and single
    hyphens, neither first nor last."""
    if not isinstance(name, str) or len(name) > 64 or not _NAME.match(name):
        raise SkillError(
            f"{where}: the skill name {name!r} breaks the Agent Skills rules (1-64 "
            "lowercase letters, digits and hyphens, no leading, trailing or double hyphen)"
        )
    return name


def _loader() -> Any:
    """A safe YAML loader that leaves dates as the strings the author wrote (the
    frontmatter is carried verbatim, as JSON)."""
    try:
        import yaml  # noqa: PLC0415  (the skills extra, needed only when skills are served)
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(
            "serving skills needs the snodo[skills] extra (PyYAML, for the frontmatter): "
            "pip install 'snodo[skills]'"
        ) from None

    class Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML is untyped
        pass

    Loader.yaml_implicit_resolvers = {
        key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return yaml, Loader


def frontmatter(text: str, where: str) -> dict[str, Any]:
    """The YAML frontmatter at the top of a ``SKILL.md``, as a JSON object."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillError(f"{where}: SKILL.md must begin with YAML frontmatter between --- lines")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise SkillError(f"{where}: SKILL.md's frontmatter has no closing --- line") from None
    _, loader = _loader()
    try:
        data = load_bounded("\n".join(lines[1:end]), loader)  # a SafeLoader, bounded
    except ValueError as exc:
        raise SkillError(f"{where}: SKILL.md: {exc}") from None
    if not isinstance(data, dict):
        raise SkillError(f"{where}: SKILL.md's frontmatter must be a mapping")
    _check_json(data, where)
    description = data.get("description")
    if not isinstance(description, str) or not description.strip() or len(description) > 1024:
        raise SkillError(f"{where}: SKILL.md needs a description of 1-1024 characters")
    check_name(data.get("name"), where)
    return data


def _check_json(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise SkillError(f"{where}: frontmatter key {key!r} is not a string")
            _check_json(item, where)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, where)
    elif value is not None and not isinstance(value, str | int | float | bool):
        raise SkillError(f"{where}: frontmatter value {value!r} has no JSON form")


def stamp(data: bytes) -> tuple[str, int]:
    """A file's ``sha256:`` digest and size, over its raw bytes."""
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest(), len(data)


def mime_type(name: str, data: bytes) -> str:
    """``text/markdown`` for ``SKILL.md`` and Markdown; otherwise the type the name
    says, else the one the content shows (text when it is UTF-8 without NULs)."""
    suffix = Path(name).suffix.lower()
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    guessed, _ = mimetypes.guess_type(name, strict=False)
    if guessed is not None:
        return guessed
    for magic, kind in _SNIFFED:
        if data.startswith(magic):
            return kind
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    return "text/plain" if b"\x00" not in data else "application/octet-stream"


def _segment(part: str, where: Path, first: bool) -> str:
    quoted = quote(part, safe="-._~!$&'()*+,;=@" + ("" if first else ":"))
    if first and quoted != part:
        raise SkillError(
            f"{where}: the folder name {part!r} is the URI's authority and must be a "
            "plain host-like name"
        )
    return quoted


def _files(folder: Path, root: Path) -> list[tuple[Path, tuple[str, ...]]]:
    """Each file of the skill in ``folder``: its path, and the parts that lead to it from
    ``root`` (resolved) once its links are resolved; SkillError for one outside it."""
    found: list[tuple[Path, tuple[str, ...]]] = []
    for base, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED)
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = Path(base) / name
            real = path.resolve()
            if not real.is_relative_to(root):
                raise SkillError(f"{path}: links out of the skills root {root}")
            if real.is_file():
                found.append((path, real.relative_to(root).parts))
    return found


def _too_many(where: str, count: int, total: int) -> SkillError:
    return SkillError(
        f"{where}: {count} files of {total} bytes; a skill may have at most "
        f"{MAX_FILES} files and {MAX_TOTAL_BYTES} bytes (16 MiB), nested skills included"
    )


def _skill(folder: Path, root: Path, skill_path: str) -> SkillFolder:
    where = str(folder)
    try:
        return _read_skill(folder, root, skill_path, where)
    except NotServable as exc:
        raise SkillError(f"{where}: a file that cannot be served: {exc}") from None
    except OSError as exc:  # gone or unreadable while it was read
        raise SkillError(f"{where}: {exc.strerror or exc}: {exc.filename}") from None


def _read_skill(folder: Path, root: Path, skill_path: str, where: str) -> SkillFolder:
    listed = _files(folder, root)
    if not any(path == folder / SKILL_FILE for path, _ in listed):
        raise SkillError(f"{where}: its {SKILL_FILE} is not a regular file")
    total = sum(os.stat(root.joinpath(*parts)).st_size for _, parts in listed)
    if len(listed) > MAX_FILES or total > MAX_TOTAL_BYTES:
        raise _too_many(where, len(listed), total)
    base = "skill://" + skill_path
    meta: dict[str, Any] = {}
    files: list[SkillFile] = []
    total = 0
    for path, parts in listed:
        relative = path.relative_to(folder).parts
        uri = base + "/" + "/".join(_segment(p, path, False) for p in relative)
        data = read_within(root, parts, MAX_TOTAL_BYTES - total)  # grown since: refused
        digest, size = stamp(data)
        total += size
        if relative == (SKILL_FILE,):
            meta = frontmatter(_text(data, where), where)
            kind = SKILL_MIME_TYPE
        else:
            kind = mime_type(path.name, data)
        files.append(SkillFile(uri, path, kind, size, digest, root, parts))
    if meta["name"] != folder.name:
        raise SkillError(
            f"{where}: the frontmatter's name {meta['name']!r} must equal the folder's "
            f"name {folder.name!r}"
        )
    files.sort(key=lambda f: (f.uri != base + "/" + SKILL_FILE, f.uri))
    return SkillFolder(skill_path, base + "/" + SKILL_FILE, meta, tuple(files))


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{where}: SKILL.md is not UTF-8 text") from None


def scan(roots: Iterable[Path]) -> tuple[SkillFolder, ...]:
    """Every skill under ``roots``, by URI; a root that is itself a skill is served
    under its own name. SkillError names the first folder that cannot be served."""
    found: dict[str, SkillFolder] = {}
    origin: dict[str, Path] = {}
    for given in roots:
        root = Path(given)
        if not root.is_dir():
            raise SkillError(f"{root}: not a folder of skills")
        top = root.parent if (root / SKILL_FILE).is_file() else root
        real = root.resolve()
        before = len(found)
        for base, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED)
            if SKILL_FILE not in names:
                continue
            folder = Path(base)
            parts = folder.relative_to(top).parts
            skill_path = "/".join(_segment(p, folder, i == 0) for i, p in enumerate(parts))
            skill = _skill(folder, real, skill_path)
            if skill.uri in found:
                raise SkillError(
                    f"{folder}: serves {skill.uri}, as {origin[skill.uri]} already does"
                )
            found[skill.uri], origin[skill.uri] = skill, folder
        if len(found) == before:  # likely a wrong path; and skills need resources to serve
            raise SkillError(f"{root}: no folder under it holds a {SKILL_FILE}")
    return tuple(found[uri] for uri in sorted(found))


def directories(files: Iterable[str]) -> Mapping[str, dict[str, str | None]]:
    """Each directory of a set of file URIs, with its direct children: a child URI maps
    to None for a subdirectory, else to itself (a file)."""
    tree: dict[str, dict[str, str | None]] = {}
    for uri in files:
        scheme, _, rest = uri.partition("://")
        parts = rest.split("/")
        for depth in range(1, len(parts)):
            parent = f"{scheme}://" + "/".join(parts[:depth])
            child = f"{scheme}://" + "/".join(parts[: depth + 1])
            tree.setdefault(parent, {})[child] = uri if depth + 1 == len(parts) else None
    return tree
