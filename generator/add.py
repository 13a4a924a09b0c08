"""``python -m generator add-revision REV --schema FILE --from BASE [--draft]``: the
pieces of a spec bump.

Pin the file (its sha256, and where it came from), copy the base revision's overlay
under the new revision's name, version and package (``generator.carry`` fits it to the
new schema), say in ``[draft]`` what keeps it a draft, and list the package where type
checking and import sorting need it. ``generator.__main__`` runs them in order.

The schema file itself never enters the repository: it is copied into the user cache
(``~/.cache/snodo/mcp-schema/REV/schema.json``), where ``locate_schema`` reads it, and the
pin records its URL (``--url``, for a published file) or the ``file:`` URL of the file
given, from which the cache is filled again on another machine that can reach it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from generator.overlay import OverlayError
from generator.revisions import Revision, revisions
from generator.source import Pin, cache_schema, sha256_of

REVISION_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def package_name(revision: str) -> str:
    return "snodo_wire_" + revision.replace("-", "_")


def _pin_text(pin: Pin, given: Path) -> str:
    lines = [
        f"# Added by python -m generator add-revision from {given.name}. The generator",
        "# refuses any file whose sha256 differs, wherever it came from.",
    ]
    for key in Pin.__dataclass_fields__:
        lines.append(f"{key} = {json.dumps(getattr(pin, key))}")
    return "\n".join(lines) + "\n"


def set_key(text: str, table: str, key: str, value: str) -> str:
    """Set ``key`` in ``[table]`` (added as the table's first key when absent)."""
    start = re.search(rf"(?m)^\[{re.escape(table)}\]\n", text)
    if start is None:
        raise OverlayError(f"the base overlay has no [{table}] table")
    end = re.search(r"(?m)^\[", text[start.end() :])
    stop = start.end() + (end.start() if end else len(text) - start.end())
    body = text[start.end() : stop]
    line = re.compile(rf"(?m)^{re.escape(key)} = .*\n")
    if line.search(body):
        body = line.sub(f"{key} = {value}\n", body, count=1)
    else:
        body = f"{key} = {value}\n{body}"
    return text[: start.end()] + body + text[stop:]


def _drop(text: str, table: str, key: str) -> str:
    start = re.search(rf"(?m)^\[{re.escape(table)}\]\n", text)
    if start is None:
        return text
    rest = re.sub(rf"(?m)^{re.escape(key)} = .*\n", "", text[start.end() :], count=1)
    return text[: start.end()] + rest


def overlay_text(base: Revision, revision: str, draft: bool) -> str:
    """BASE's overlay, speaking REV: its package, version and whether it is served; its
    comments name REV where they named BASE."""
    text = (base.folder / "overlay.toml").read_text(encoding="utf-8")
    old = base.pin.revision
    text = "\n".join(
        line.replace(old, revision) if line.startswith("#") else line for line in text.split("\n")
    )
    head = f"# Copied from schema/{old}/overlay.toml by python -m generator add-revision.\n"
    text = head + text
    text = set_key(text, "package", "name", json.dumps(package_name(revision)))
    text = set_key(text, "package", "served", "false" if draft else "true")
    text = set_key(text, "protocol", "latest_version", json.dumps(revision))
    text = set_key(text, "protocol", "supported_versions", json.dumps([revision]))
    return _drop(text, "protocol", "batch_versions")


def set_draft(text: str, asked: list[str], unfilled: list[str]) -> str:
    """``text`` with its ``[draft]`` table saying what is still open (none: no table)."""
    kept = []
    skipping = False
    for line in text.splitlines():
        if line.startswith(DRAFT_COMMENT) or line == "[draft]":
            skipping = True
        elif skipping and line.startswith("["):
            skipping = False
        if not skipping:
            kept.append(line)
    text = "\n".join(kept).rstrip("\n") + "\n"
    if not asked and not unfilled:
        return text
    lines = [
        "",
        f"{DRAFT_COMMENT} (python -m generator add-revision): answer each",
        "# question in the entries above, or make runtime code fill each field, and run",
        "# add-revision again; it finds them again from the overlay, the schema and the runtime.",
        "[draft]",
    ]
    if asked:
        lines.append("asked = [")
        lines += [f"    {json.dumps(question)}," for question in asked]
        lines.append("]")
    if unfilled:
        lines.append(f"unfilled = {json.dumps(unfilled)}")
    return text + "\n".join(lines) + "\n"


DRAFT_COMMENT = "# What keeps this revision a draft"


def start_revision(
    revision: str,
    schema_file: Path,
    base_name: str,
    *,
    url: str | None,
    root: Path,
) -> tuple[Pin, bytes, Revision]:
    """The pin of ``schema_file`` as ``revision``, its bytes, and the base revision."""
    if not REVISION_NAME.match(revision):
        raise OverlayError(f"revision {revision!r} is not a date like 2026-07-28")
    known = {r.pin.revision: r for r in revisions(root / "schema")}
    base = known.get(base_name)
    if base is None or base.overlay.extension is not None:
        cores = sorted(n for n, r in known.items() if r.overlay.extension is None)
        raise OverlayError(f"--from {base_name}: not a pinned core revision (known: {cores})")
    data = schema_file.read_bytes()
    try:
        json.loads(data)["$defs"]
    except (ValueError, KeyError, TypeError) as exc:
        raise OverlayError(f"{schema_file} is not a JSON schema with $defs") from exc
    source = url or schema_file.resolve().as_uri()
    pin = Pin(
        revision=revision,
        repository=base.pin.repository if url else "",
        path=f"schema/{revision}/schema.json" if url else str(schema_file.resolve()),
        commit="unrecorded: added from a file; the sha256 is the pin",
        sha256=sha256_of(data),
        url=source,
    )
    return pin, data, base


def write_pin(folder: Path, pin: Pin, given: Path, data: bytes) -> None:
    """``folder/pin.toml``, and the file in the user cache, where the generator reads it."""
    folder.mkdir(parents=True)
    (folder / "pin.toml").write_text(_pin_text(pin, given), encoding="utf-8")
    cache_schema(pin, data)


def register(package: str, pyproject: Path) -> None:
    """List ``package`` in pyproject.toml's mypy ``files`` and isort ``known-first-party``
    (packaging finds ``snodo_wire*`` by itself)."""
    text = pyproject.read_text(encoding="utf-8")
    for key, entry in (("files", f"generated/{package}"), ("known-first-party", package)):
        line = re.search(rf"(?m)^{re.escape(key)} = \[(.*)\]$", text)
        if line is None:
            raise OverlayError(f"{pyproject} has no {key} = [...] line")
        items = json.loads(f"[{line.group(1)}]")
        if entry in items:
            continue
        wire = [i for i, item in enumerate(items) if "snodo_wire" in item]
        items.insert(wire[-1] + 1 if wire else len(items), entry)
        text = text[: line.start()] + f"{key} = {json.dumps(items)}" + text[line.end() :]
    pyproject.write_text(text, encoding="utf-8")


def undo(folder: Path, package_dir: Path) -> None:
    """Remove what a failed add-revision wrote."""
    for path in (folder, package_dir):
        if path.exists():
            shutil.rmtree(path)
