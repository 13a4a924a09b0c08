"""Find the pinned MCP schema and prove it is the pinned one.

Three places, in order: a path given on the command line, the folder named by
``SNODO_SCHEMA_DIR`` (when it holds the revision), and a per-user cache that is filled
by downloading the pinned URL (``add-revision`` fills it from the file it is given).
A schema the project wrote itself from a specification that publishes none (a pin with
``translated``) is committed beside its pin and read from there alone; when it changes a
pinned revision (a pin with ``base``), only the changes are committed
(``translation.json``, held to ``translation_sha256``) and the schema is composed from
the base revision's own verified schema and them. A schema shipped
in a pinned npm package that the scripts install under ``interop/`` (a pin with
``installed``) is read there first, where it is. Whichever it is, the file's sha256 must
equal the pin; a mismatch stops generation.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from generator.translation import TranslationError, compose, dump

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR_ENV = "SNODO_SCHEMA_DIR"


class SchemaSourceError(Exception):
    """The schema could not be found, fetched, or did not match the pin."""


@dataclass(frozen=True, slots=True)
class Pin:
    revision: str
    repository: str
    path: str
    commit: str
    sha256: str
    url: str
    translated: str = ""
    """What was translated, when the schema is the project's own rendering of the
    specification text at ``repository``/``path``/``commit`` (no JSON schema published
    there): the file is ``schema/<revision>/schema.json`` beside the pin."""
    installed: str = ""
    """Where the file is in the checkout once the scripts have installed the pinned npm
    package that ships it (``interop/NAME/node_modules/...``), when one does."""
    base: str = ""
    """The pinned revision a translated pin changes: its schema, found and verified as
    that revision's, plus ``schema/<revision>/translation.json`` is this one's, and
    ``sha256`` is the composed schema's."""
    translation_sha256: str = ""
    """The sha256 of ``translation.json``'s bytes, for a pin with a ``base``."""


_OPTIONAL = ("translated", "installed", "base", "translation_sha256")


def load_pin(path: Path) -> Pin:
    with path.open("rb") as f:
        data = tomllib.load(f)
    fields = {key: str(data[key]) for key in Pin.__dataclass_fields__ if key not in _OPTIONAL}
    return Pin(**fields, **{key: str(data.get(key, "")) for key in _OPTIONAL})


def installed(pin: Pin) -> Path | None:
    """The installed copy of an npm-shipped pin's file, when it is there."""
    if not pin.installed:
        return None
    path = ROOT / pin.installed
    return path if path.is_file() else None


def translation(pin: Pin) -> Path:
    """Where a translated pin's schema (or, with a ``base``, its changes) is committed."""
    name = "translation.json" if pin.base else "schema.json"
    return ROOT / "schema" / pin.revision / name


def base_pin(pin: Pin) -> Pin:
    """The pin of the revision a translated pin changes."""
    path = ROOT / "schema" / pin.base / "pin.toml"
    if not path.is_file():
        raise SchemaSourceError(f"{pin.revision}'s base {pin.base} is not pinned ({path})")
    return load_pin(path)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _candidate(base: Path, pin: Pin) -> Path:
    """Accept either the schema file itself or a folder laid out like the pin's."""
    if base.is_file():
        return base
    for candidate in (base / pin.revision / "schema.json", base / "schema.json"):
        if candidate.is_file():
            return candidate
    raise SchemaSourceError(f"no schema.json for revision {pin.revision} under {base}")


def cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "snodo" / "mcp-schema"


def _download(pin: Pin, target: Path) -> None:
    try:
        with urllib.request.urlopen(pin.url, timeout=30) as response:
            data: bytes = response.read()
    except OSError as exc:
        raise SchemaSourceError(
            f"could not download the pinned schema from {pin.url}: {exc}; "
            f"set {SCHEMA_DIR_ENV} to a folder that holds {pin.revision}/schema.json"
        ) from exc
    _verify(data, pin, pin.url)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
        tmp.write(data)
    Path(tmp.name).replace(target)


def _verify(data: bytes, pin: Pin, origin: object) -> None:
    actual = sha256_of(data)
    if actual != pin.sha256:
        raise SchemaSourceError(
            f"{origin} has sha256 {actual}, but the pin record pins {pin.sha256} "
            f"(revision {pin.revision}, commit {pin.commit}); refusing to generate from it"
        )


def at_hand(pin: Pin, explicit: Path | None = None) -> bool:
    """Whether ``locate_schema`` would find the schema without downloading it: given,
    named by ``SNODO_SCHEMA_DIR``, or already in the cache. A named place that lacks it
    still counts, so that ``locate_schema`` says what is wrong there."""
    if pin.base:
        return at_hand(base_pin(pin), explicit)
    if pin.translated or installed(pin) is not None:
        return True
    if explicit is not None or os.environ.get(SCHEMA_DIR_ENV):
        return True
    return (cache_dir() / pin.revision / "schema.json").is_file()


def locate_schema(pin: Pin, explicit: Path | None = None) -> tuple[Path, bytes]:
    """Return the path and verified bytes of the schema ``pin`` names.

    A revision added from a local file (``add-revision``) is not in the shared schema
    folder: when ``SNODO_SCHEMA_DIR`` has no copy of it, the user cache is read, and
    filled from the pin's URL if that is a local ``file:`` one. Otherwise a named folder
    that lacks the revision is an error naming the folder, never a download.
    """
    if pin.base:
        return _composed(pin, explicit)
    named = os.environ.get(SCHEMA_DIR_ENV)
    if pin.translated:
        path = translation(pin)
        if not path.is_file():
            raise SchemaSourceError(f"{path} is missing: the pin says it is committed there")
    elif explicit is not None:
        path = _candidate(explicit, pin)
    elif (found := installed(pin)) is not None:
        path = found
    elif named and _holds(Path(named), pin):
        path = _candidate(Path(named), pin)
    elif named and not (cache_dir() / pin.revision / "schema.json").is_file():
        if not pin.url.startswith("file:"):
            if pin.installed:
                raise SchemaSourceError(
                    f"{pin.installed} is missing and {named} holds no {pin.revision}/"
                    "schema.json: install the pinned npm package (npm ci in "
                    f"{pin.installed.split('/node_modules/')[0]}, as scripts/test does)"
                )
            _candidate(Path(named), pin)  # raises: no schema.json for the revision there
        path = cache_dir() / pin.revision / "schema.json"
        _download(pin, path)
    else:
        path = cache_dir() / pin.revision / "schema.json"
        if not path.is_file():
            _download(pin, path)
    data = path.read_bytes()
    _verify(data, pin, path)
    return path, data


def _composed(pin: Pin, explicit: Path | None) -> tuple[Path, bytes]:
    """A translation's path and the schema composed from its verified bytes and its base
    revision's verified schema, held to the pin's sha256 too."""
    path = translation(pin)
    if not path.is_file():
        raise SchemaSourceError(f"{path} is missing: the pin says it is committed there")
    changes = path.read_bytes()
    if sha256_of(changes) != pin.translation_sha256:
        raise SchemaSourceError(
            f"{path} has sha256 {sha256_of(changes)}, but the pin record pins "
            f"translation_sha256 {pin.translation_sha256}; refusing to generate from it"
        )
    _, base = locate_schema(base_pin(pin), explicit)
    try:
        data = dump(compose(json.loads(base), json.loads(changes)))
    except (TranslationError, ValueError, TypeError, AttributeError) as exc:
        raise SchemaSourceError(f"{path} does not apply to {pin.base}: {exc}") from exc
    _verify(data, pin, f"the schema composed from {pin.base} and {path}")
    return path, data


def _holds(base: Path, pin: Pin) -> bool:
    try:
        _candidate(base, pin)
    except SchemaSourceError:
        return False
    return True


def cache_schema(pin: Pin, data: bytes) -> Path:
    """Put a verified schema where ``locate_schema`` finds it: the user cache."""
    _verify(data, pin, "the given file")
    target = cache_dir() / pin.revision / "schema.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
        tmp.write(data)
    Path(tmp.name).replace(target)
    return target
