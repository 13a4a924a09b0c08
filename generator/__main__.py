"""``python -m generator generate|check [--schema PATH]``.

generate: rewrite ``generated/snodo_wire`` from the pinned schema.
check:    regenerate into a temporary folder and fail, with a unified diff, when the
          committed package differs from what schema + overlay + templates produce.
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from generator.overlay import OverlayError
from generator.render import PACKAGE, render_package
from generator.source import ROOT, SchemaSourceError, locate_schema

GENERATED = ROOT / "generated" / PACKAGE


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


def generate_into(target: Path, schema_path: Path | None) -> None:
    _, data = locate_schema(schema_path)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / PACKAGE
        render_package(json.loads(data), fresh)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(fresh, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator", description=__doc__)
    parser.add_argument("command", choices=["generate", "check"])
    parser.add_argument(
        "--schema", type=Path, help="schema.json, or a folder holding REVISION/schema.json"
    )
    parser.add_argument(
        "--out", type=Path, default=GENERATED, help="package folder to write or check"
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "generate":
            generate_into(args.out, args.schema)
            print(f"wrote {args.out}")
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / PACKAGE
            generate_into(fresh, args.schema)
            diff = diff_trees(fresh, args.out)
    except (SchemaSourceError, OverlayError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if diff:
        sys.stdout.write(diff)
        print(f"\n{args.out} has drifted: run `python -m generator generate`")
        return 1
    print(f"{args.out} matches schema + overlay + templates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
