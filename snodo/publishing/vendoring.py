"""What a bundle carries besides the server: snodo and what it needs, as this Python has them.

A bundle's host starts the server with its own Python and nothing installed, so the
bundle holds every module the server imports beyond the standard library: snodo itself
(the runtime and its generated wire packages, from wherever this process imports them)
and the distributions it requires (pydantic, pydantic-core, jsonschema-rs and theirs),
each with its ``.dist-info`` (its licence travels with it). Some are compiled for this
platform and this Python's minor version, which is why the manifest says which
(``snodo.publishing.bundle``). ``extra`` names further distributions a server imports.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from snodo.publishing.identity import PublishingError
from snodo.revisions.catalog import CATALOG, DOCUMENTS, EXTENSIONS

__all__ = ["Vendored", "vendored"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
RUNTIME = ("pydantic", "jsonschema-rs")
"""What snodo requires (pyproject.toml's ``dependencies``), for a checkout that runs
uninstalled; an installed snodo's metadata says the same."""
SKIPPED = frozenset({"__pycache__"})


@dataclass(frozen=True, slots=True)
class Vendored:
    """One file to put in the bundle: where it is here, and its path under ``lib/``."""

    source: Path
    target: PurePosixPath


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _applies(requirement: str) -> bool:
    """A requirement without an extra, whose environment marker (if any) holds here."""
    _, semicolon, marker = requirement.partition(";")
    if not semicolon:
        return True
    if "extra" in marker:
        return False
    try:
        from packaging.markers import Marker  # noqa: PLC0415 - where it is installed
    except ImportError:  # without it, a conditional requirement is taken when installed
        return True
    return bool(Marker(marker.strip()).evaluate())


def _closure(roots: Iterable[str]) -> list[importlib.metadata.Distribution]:
    """The distributions ``roots`` name and every one they require, each once."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    waiting = [_canonical(name) for name in roots]
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        try:
            found = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            raise PublishingError(
                f"{name} is not installed here, so it cannot be bundled"
            ) from None
        seen[name] = found
        for requirement in found.requires or ():
            match = _NAME.match(requirement)
            if match is not None and _applies(requirement):
                waiting.append(_canonical(match.group(0)))
    return [seen[name] for name in sorted(seen)]


def _top_level(dist: importlib.metadata.Distribution) -> list[str]:
    """The importable names a distribution installs."""
    listed = dist.read_text("top_level.txt")
    if listed:
        return sorted(set(listed.split()))
    names = set()
    for file in dist.files or ():
        first = file.parts[0]
        if first.endswith((".dist-info", ".data")) or first in ("..", "__pycache__"):
            continue
        if len(file.parts) > 1 or file.suffix in (".py", ".so", ".pyd"):
            names.add(first.split(".")[0] if len(file.parts) == 1 else first)
    return sorted(names)


def _snodo_modules() -> list[str]:
    """snodo and its generated wire packages (as the catalog names them): an editable
    install's metadata cannot be trusted to list the packages added since."""
    packages = {row[1] for row in CATALOG} | {p for _, p in EXTENSIONS} | {p for _, p in DOCUMENTS}
    return ["snodo", *sorted(packages)]


def _files(module: str) -> Iterator[Vendored]:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        raise PublishingError(f"the module {module} cannot be found here to bundle it")
    if spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and not SKIPPED & set(relative.parts) and path.suffix != ".pyc":
                yield Vendored(path, PurePosixPath(module, *relative.parts))
    else:
        origin = Path(str(spec.origin))
        yield Vendored(origin, PurePosixPath(origin.name))


def _metadata(dist: importlib.metadata.Distribution) -> Iterator[Vendored]:
    folder = getattr(dist, "_path", None)
    if isinstance(folder, Path) and folder.name.endswith(".dist-info") and folder.is_dir():
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                relative = path.relative_to(folder.parent)
                yield Vendored(path, PurePosixPath(*relative.parts))


def vendored(extra: Iterable[str] = ()) -> list[Vendored]:
    """Every file of snodo and its required distributions (and ``extra``'s), each once."""
    files: dict[PurePosixPath, Vendored] = {}
    modules: set[str] = set(_snodo_modules())
    try:
        importlib.metadata.distribution("snodo")
        roots = ["snodo", *extra]
    except importlib.metadata.PackageNotFoundError:
        roots = [*RUNTIME, *extra]
    for dist in _closure(roots):
        if _canonical(dist.metadata["Name"]) != "snodo":
            modules.update(_top_level(dist))
            for item in _metadata(dist):
                files[item.target] = item
    for module in sorted(modules):
        if module in sys.stdlib_module_names:
            continue
        for item in _files(module):
            files[item.target] = item
    return [files[target] for target in sorted(files)]
