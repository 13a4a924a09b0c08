"""``python -m generator COMMAND``: the wire packages and the revisions they come from.

generate      rewrite ``generated/<package>`` for every pinned revision under ``schema/``,
              and the runtime's catalog (``snodo/revisions/catalog.py``).
check         regenerate into a temporary folder and fail, with a unified diff, when a
              committed package or the catalog differs from what schema + overlay +
              templates produce. With --if-at-hand, a schema not at hand (no --schema,
              no SNODO_SCHEMA_DIR, not cached) skips the check in one line instead of
              downloading it: the packages are committed, so running them needs none.
add-revision  REV --schema FILE --from BASE [--draft]: pin, the base's overlay carried
              into REV, package, catalog; a draft while a question is open or a required
              field unfilled, which ``add-revision REV`` resumes.
coverage      REV: what REV defines that the runtime does not serve, one line each.
diff          A B: definitions added, removed and changed (descriptions apart).
upstream      [--source URL]: each pin against what upstream publishes now.
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

from generator.add import (
    overlay_text,
    package_name,
    register,
    set_draft,
    set_key,
    start_revision,
    undo,
    write_pin,
)
from generator.carry import carry
from generator.catalog import CATALOG, render_catalog
from generator.coverage import coverage
from generator.overlay import OverlayError
from generator.render import clashes, render_package
from generator.revisions import SCHEMA_ROOT, Revision, load_revision, revisions
from generator.schemadiff import diff_definitions
from generator.source import ROOT, SCHEMA_DIR_ENV, SchemaSourceError, at_hand, locate_schema
from generator.upstream import upstream

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


def check_repeated(
    schema: dict[str, Any], revision: Revision, schema_path: Path | None
) -> list[str]:
    """An extension's copies of its base revision's definitions must mean the same, or
    a value valid for one package would be refused by the other. Copies that differ
    in descriptions only are warnings (returned); a real difference stops generation
    unless ``[extension.redefines]`` names the definition."""
    extension = revision.overlay.extension
    if extension is None:
        return []
    base = next((r for r in revisions() if r.pin.revision == extension.base), None)
    if base is None:
        raise OverlayError(f"[extension] base {extension.base} is not a pinned revision")
    _, base_data = locate_schema(base.pin, schema_path)
    base_defs = json.loads(base_data)["$defs"]
    shared = {name: body for name, body in schema["$defs"].items() if name in base_defs}
    found = diff_definitions({"$defs": {n: base_defs[n] for n in shared}}, {"$defs": shared})
    unknown = sorted(set(extension.redefines) - set(shared))
    if unknown:
        raise OverlayError(
            f"[extension.redefines] names {unknown}, which {revision.pin.revision} does not "
            f"repeat from {extension.base}"
        )
    differ = [name for name in found.changed if name not in extension.redefines]
    if differ:
        raise OverlayError(
            f"{revision.pin.revision} redefines {differ} differently from {extension.base} "
            "(beyond descriptions): make the copies agree, or name each in "
            "[extension.redefines] with the reason"
        )
    return [
        f"{revision.pin.revision}'s {name} differs from {extension.base}'s {name} in "
        "descriptions only"
        for name in found.described
    ]


def generate_into(target: Path, revision: Revision, schema_path: Path | None) -> None:
    """Replace ``target`` with the package compiled from ``revision``."""
    _, data = locate_schema(revision.pin, schema_path)
    for warning in check_repeated(json.loads(data), revision, schema_path):
        print(f"warning: {warning}", file=sys.stderr)
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


def _check(chosen: tuple[Revision, ...], out: Path, schema: Path | None, catalog: Path) -> int:
    diffs: dict[str, str] = {}
    unchecked: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for revision in chosen:
            fresh = Path(tmp) / revision.package
            try:
                generate_into(fresh, revision, schema)
            except SchemaSourceError as exc:
                # A document schema published only where this machine cannot reach (the
                # Server Card's, the registry's on GitHub) is named, not a failure: its
                # committed package stays as it was generated. A protocol revision's is.
                if revision.overlay.document is None:
                    raise
                print(f"{out / revision.package} not checked: {exc}")
                unchecked.append(revision.package)
                continue
            diffs[revision.package] = diff_trees(fresh, out / revision.package)
    drifted = [package for package, diff in diffs.items() if diff]
    for package in drifted:
        sys.stdout.write(diffs[package])
        print(f"\n{out / package} has drifted")
    for package in sorted(set(diffs) - set(drifted)):
        print(f"{out / package} matches schema + overlay + templates")
    want = render_catalog(revisions())
    have = catalog.read_text(encoding="utf-8") if catalog.is_file() else ""
    if want != have:
        sys.stdout.writelines(
            difflib.unified_diff(
                have.splitlines(keepends=True),
                want.splitlines(keepends=True),
                fromfile=f"committed/{catalog.name}",
                tofile=f"regenerated/{catalog.name}",
            )
        )
        print(f"\n{catalog} has drifted from the pinned revisions")
    else:
        print(f"{catalog} matches the pinned revisions")
    if drifted:
        print(
            f"{len(drifted)} of {len(diffs)} packages drifted: run `python -m generator generate`"
        )
        return 1
    if want != have:
        print("the catalog drifted: run `python -m generator generate`")
        return 1
    if unchecked:
        print(
            f"{len(diffs)} packages match schema + overlay + templates;"
            f" not checked (schema not at hand): {', '.join(unchecked)}"
        )
        return 0
    print(f"all {len(diffs)} packages match schema + overlay + templates")
    return 0


def _generate(chosen: tuple[Revision, ...], out: Path, schema: Path | None, catalog: Path) -> int:
    for revision in chosen:
        try:
            generate_into(out / revision.package, revision, schema)
        except SchemaSourceError as exc:
            if revision.overlay.document is None:  # as in _check: only a document's
                raise
            print(f"not generated: {revision.package}: {exc}", file=sys.stderr)
            continue
        for note in clashes(out / revision.package):
            print(f"note: {note}", file=sys.stderr)
        print(f"wrote {out / revision.package}")
    catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.write_text(render_catalog(revisions()), encoding="utf-8")
    print(f"wrote {catalog}")
    return 0


def _add_revision(args: argparse.Namespace) -> int:
    """Pin, carry the base overlay, generate, check what the runtime fills, register; a
    draft when a question is open or a required field unfilled. A second run resumes a
    draft. What this run wrote is undone when a step fails."""
    folder = SCHEMA_ROOT / args.revision
    package_dir = GENERATED / package_name(args.revision)
    overlay_file = folder / "overlay.toml"
    resuming = folder.exists()
    before = overlay_file.read_text(encoding="utf-8") if resuming else None
    kept = Path(tempfile.mkdtemp()) / "package"
    if resuming and package_dir.is_dir():  # a draft generated before: restored on failure
        shutil.copytree(package_dir, kept)
    if resuming and load_revision(folder).overlay.served:
        raise OverlayError(f"{folder} is a served revision already: a revision is added once")
    try:
        if resuming:
            text, carried = _resumed(folder)
        elif args.schema is None or args.base is None:
            raise OverlayError("add-revision REV needs --schema FILE and --from BASE")
        else:
            pin, data, base = start_revision(
                args.revision, args.schema, args.base, url=args.url, root=ROOT
            )
            write_pin(folder, pin, args.schema, data)
            print(f"wrote {_shown(folder / 'pin.toml')}")
            _, old = locate_schema(base.pin, None)
            carried = carry(
                overlay_text(base, args.revision, args.draft),
                json.loads(old),
                json.loads(data),
                args.revision,
            )
            text = carried.text
        for line in carried.lines:
            print(line)
        if carried.questions:
            draft = set_key(set_draft(text, carried.questions, []), "package", "served", "false")
            overlay_file.write_text(draft, encoding="utf-8")
            print(f"wrote {_shown(overlay_file)}")
            for question in carried.questions:
                print(f"question: {question}")
            print(
                f"{args.revision} is a draft with {len(carried.questions)} open question(s): "
                f"answer them in {_shown(overlay_file)} and run add-revision again"
            )
            return 3
        overlay_file.write_text(set_draft(text, [], []), encoding="utf-8")
        revision = load_revision(folder)
        generate_into(package_dir, revision, None)
        for note in clashes(package_dir):
            print(f"note: {note}", file=sys.stderr)
        print(f"wrote {_shown(package_dir)}")
        report = coverage(revision)
        problems = [line for line in report.lines if line.startswith("error: the registry")]
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            raise OverlayError(
                f"the runtime's registry cannot read {revision.package}: "
                f"{len(problems)} problem(s) above"
            )
        served = not args.draft and not report.unfilled
        final = set_key(
            set_draft(text, [], list(report.unfilled)), "package", "served", str(served).lower()
        )
        overlay_file.write_text(final, encoding="utf-8")
        for name in report.unfilled:
            print(f"draft: {name} is required and no runtime code fills it")
        print(f"wrote {_shown(overlay_file)}")
    except BaseException:
        if resuming:
            shutil.rmtree(package_dir, ignore_errors=True)
            if kept.is_dir():
                shutil.copytree(kept, package_dir)
            if before is not None:
                overlay_file.write_text(before, encoding="utf-8")
        else:
            undo(folder, package_dir)
        raise
    finally:
        shutil.rmtree(kept.parent, ignore_errors=True)
    CATALOG.write_text(render_catalog(revisions()), encoding="utf-8")
    print(f"wrote {_shown(CATALOG)}")
    register(revision.package, ROOT / "pyproject.toml")
    print(f"listed {revision.package} in pyproject.toml (mypy files, isort known-first-party)")
    if served:
        state = "served by `snodo run` beside the others"
    elif report.unfilled:
        state = (
            f"a draft, not served: {len(report.unfilled)} required field(s) no runtime code "
            "fills; run add-revision again once code fills them"
        )
    else:
        state = "a draft, not served"
    print(f"{args.revision} is {state}; see `python -m generator coverage {args.revision}`")
    return 0


def _shown(path: Path) -> str:
    """A path as the repository names it."""
    return path.relative_to(ROOT).as_posix()


def _resumed(folder: Path) -> tuple[str, Any]:
    """A draft's overlay as the last run (and whoever answered its questions) left it,
    checked again against its schema."""
    text = (folder / "overlay.toml").read_text(encoding="utf-8")
    revision = load_revision(folder)
    _, data = locate_schema(revision.pin, None)
    carried = carry(text, None, json.loads(data), revision.pin.revision)
    return carried.text, carried


def _coverage(args: argparse.Namespace) -> int:
    (revision,) = _selected(args.revision)
    report = coverage(revision)
    for line in report.lines:
        print(line)
    print(f"{revision.pin.revision}: {len(report.lines)} finding(s), {report.errors} error(s)")
    return 1 if report.errors else 0


def _diff(args: argparse.Namespace) -> int:
    (old,), (new,) = _selected(args.a), _selected(args.b)
    before = json.loads(locate_schema(old.pin, args.schema)[1])
    after = json.loads(locate_schema(new.pin, args.schema)[1])
    found = diff_definitions(before, after)
    print(
        f"{old.pin.revision} -> {new.pin.revision}: {len(found.added)} added, "
        f"{len(found.removed)} removed, {len(found.changed)} changed, "
        f"{len(found.described)} changed in descriptions only"
    )
    for line in found.lines():
        print(line)
    return 0


def _upstream(args: argparse.Namespace) -> int:
    report = upstream(revisions(), args.source, args.schema)
    for line in report.lines:
        print(line)
    return 1 if report.drifted else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator", description=__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("generate", "check"):
        sub = commands.add_parser(name)
        sub.add_argument("--revision", help="only this pinned revision (default: all)")
        sub.add_argument(
            "--schema",
            type=Path,
            help="a folder holding REVISION/schema.json; a schema.json file with --revision",
        )
        sub.add_argument("--out", type=Path, default=GENERATED, help="folder holding the packages")
        sub.add_argument("--catalog", type=Path, default=CATALOG, help=argparse.SUPPRESS)
        if name == "check":
            sub.add_argument(
                "--if-at-hand",
                action="store_true",
                help="skip, in one line, when a pinned schema would have to be downloaded",
            )
    add = commands.add_parser(
        "add-revision", help="pin, carry the overlay, generate and register REV (again: resume)"
    )
    add.add_argument("revision", metavar="REV")
    add.add_argument("--schema", type=Path, help="REV's schema.json (not when resuming)")
    add.add_argument("--from", dest="base", help="the revision to copy from (not when resuming)")
    add.add_argument("--draft", action="store_true", help="generate, but do not serve it")
    add.add_argument("--url", help="where the file is published (recorded in the pin)")
    cover = commands.add_parser("coverage", help="what REV defines that the runtime does not serve")
    cover.add_argument("revision", metavar="REV")
    diff = commands.add_parser("diff", help="definitions added, removed and changed from A to B")
    diff.add_argument("a", metavar="A")
    diff.add_argument("b", metavar="B")
    diff.add_argument("--schema", type=Path, help="a folder holding REVISION/schema.json")
    drift = commands.add_parser("upstream", help="each pin against what upstream publishes now")
    drift.add_argument("--source", help="a URL laid out like schema/: REVISION/schema.json")
    drift.add_argument("--schema", type=Path, help="a folder holding REVISION/schema.json")
    args = parser.parse_args(argv)
    try:
        if args.command == "add-revision":
            return _add_revision(args)
        if args.command == "coverage":
            return _coverage(args)
        if args.command == "diff":
            return _diff(args)
        if args.command == "upstream":
            return _upstream(args)
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
            return _generate(chosen, args.out, args.schema, args.catalog)
        return _check(chosen, args.out, args.schema, args.catalog)
    except (SchemaSourceError, OverlayError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
