"""``python -m generator generate|check [--revision REV] [--schema PATH] [--out DIR]``.

generate: rewrite ``generated/<package>`` for every pinned revision under ``schema/``.
check:    regenerate into a temporary folder and fail, with a unified diff, when a
          committed package differs from what schema + overlay + templates produce.
          With --if-at-hand, a schema not at hand (no --schema, no SNODO_SCHEMA_DIR, not
          cached) skips the check with one line instead of downloading it: the packages
          are committed, so running them needs no schema.
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from generator.overlay import OverlayError
from generator.render import render_package
from generator.revisions import Revision, revisions
from generator.source import ROOT, SCHEMA_DIR_ENV, SchemaSourceError, at_hand, locate_schema

GENERATED = ROOT / "generated"


def _files(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def diff_trees(expected: Path, actual: Path) -> str:
    """A unified diff from ``actual`` (committed) to ``expected`` (fresh); empty if equal."""
    want, have = _files(expected), _files(actual)
    chunks: list[str] = []
    for name in sorted(set(want) | set(have)):
        if want.get(name) != have.get(name):
            chunks.extend(
                difflib.unified_diff(
                    have.get(name, "").splitlines(keepends=True),
                    want.get(name, "").splitlines(keepends=True),
                    fromfile=f"committed/{name}",
                    tofile=f"regenerated/{name}",
                )
            )
    return "".join(chunks)


def check_repeated(schema: dict[str, Any], revision: Revision, schema_path: Path | None) -> None:
    """An extension's copies of its base revision's definitions must be exact copies;
    otherwise a value valid for one package would be refused by the other."""
    extension = revision.overlay.extension
    if extension is None:
        return
    base = next((r for r in revisions() if r.pin.revision == extension.base), None)
    if base is None:
        raise OverlayError(f"[extension] base {extension.base} is not a pinned revision")
    _, base_data = locate_schema(base.pin, schema_path)
    base_defs = json.loads(base_data)["$defs"]
    differ = sorted(
        name
        for name, body in schema["$defs"].items()
        if name in base_defs and base_defs[name] != body
    )
    if differ:
        raise OverlayError(
            f"{revision.pin.revision} redefines {differ} differently from {extension.base}"
        )


def generate_into(target: Path, revision: Revision, schema_path: Path | None) -> None:
    """Replace ``target`` with the package compiled from ``revision``."""
    _, data = locate_schema(revision.pin, schema_path)
    check_repeated(json.loads(data), revision, schema_path)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / revision.package
        render_package(json.loads(data), fresh, revision.pin, revision.overlay)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(fresh, target)


def _selected(wanted: str | None) -> tuple[Revision, ...]:
    found = revisions()
    chosen = tuple(r for r in found if wanted in (None, r.pin.revision))
    if not chosen:
        raise OverlayError(f"no pinned revision {wanted}; known: {[r.pin.revision for r in found]}")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator", description=__doc__)
    parser.add_argument("command", choices=["generate", "check"])
    parser.add_argument("--revision", help="only this pinned revision (default: all)")
    parser.add_argument(
        "--schema",
        type=Path,
        help="a folder holding REVISION/schema.json; a schema.json file with --revision",
    )
    parser.add_argument(
        "--out", type=Path, default=GENERATED, help="folder holding the packages to write or check"
    )
    parser.add_argument(
        "--if-at-hand",
        action="store_true",
        help="check: skip, in one line, when a pinned schema would have to be downloaded",
    )
    args = parser.parse_args(argv)
    try:
        chosen = _selected(args.revision)
        missing = [r.pin.revision for r in chosen if not at_hand(r.pin, args.schema)]
        if args.command == "check" and args.if_at_hand and missing:
            print(
                f"generator check skipped: no schema at hand for {', '.join(missing)} "
                f"(set {SCHEMA_DIR_ENV} to a folder holding REVISION/schema.json)"
            )
            return 0
        if args.schema is not None and args.schema.is_file() and len(chosen) > 1:
            parser.error("--schema names one file: choose its revision with --revision")
        if args.command == "generate":
            for revision in chosen:
                generate_into(args.out / revision.package, revision, args.schema)
                print(f"wrote {args.out / revision.package}")
            return 0
        diffs: dict[str, str] = {}
        with tempfile.TemporaryDirectory() as tmp:
            for revision in chosen:
                fresh = Path(tmp) / revision.package
                generate_into(fresh, revision, args.schema)
                diffs[revision.package] = diff_trees(fresh, args.out / revision.package)
    except (SchemaSourceError, OverlayError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    drifted = [package for package, diff in diffs.items() if diff]
    for package in drifted:
        sys.stdout.write(diffs[package])
        print(f"\n{args.out / package} has drifted")
    for package in sorted(set(diffs) - set(drifted)):
        print(f"{args.out / package} matches schema + overlay + templates")
    if drifted:
        print(
            f"{len(drifted)} of {len(diffs)} packages drifted: run `python -m generator generate`"
        )
        return 1
    print(f"all {len(diffs)} packages match schema + overlay + templates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
