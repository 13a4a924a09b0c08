"""Summarise conformance runner output: one table per run, then one plain total line.

Usage:
    python scripts/conformance_report.py [--requirements YAML --required DIR]
                                         [--client DIR] [DIR ...]

Every DIR is what ``conformance server ... -o DIR`` wrote: one directory per scenario,
``server-<scenario>-<timestamp>/checks.json``, a JSON array of checks whose ``status``
is SUCCESS, FAILURE, WARNING, SKIPPED or INFO. A scenario passes when it has at least
one SUCCESS and no FAILURE (warnings do not fail it, as in the runner itself); a
scenario directory without readable checks fails.

``--client DIR`` is where ``conformance client ... -o DIR`` runs wrote
(``<scenario>-<timestamp>/checks.json``, ``auth/<scenario>-<timestamp>/...``). Every
scenario there counts, and a WARNING fails it too, as the runner's client leg has it.
The runner's exit status also covers what checks.json cannot show (a client that
crashed or timed out), so ``DIR/runner-status``, when present, holds one
``<scenario> <exit status>`` line per run: a nonzero status fails the scenario, and a
listed scenario without results fails.

``--required DIR`` is a ``--requirements`` run, scored against the runner's own
requirement set (``requirements/<revision>.yaml`` in the runner package): only the
server scenarios listed there count, a listed scenario that did not run fails, and
the extension and pending scenarios the runner also runs are shown as not scored:
they do not count in the total, but every one of them must pass too (the tasks
extension's scenarios included), and a line says how many did; with
``--only-required`` they are shown and counted on that line but decide nothing (a
proxy in front of the fixture serves the core, not the tasks extension).
Every scenario of a plain DIR (a ``--suite all`` run) counts. Pending scenarios are
named in the requirement set's ``not_scored`` list; their results in the plain runs
are printed on their own lines, before the final ``conformance: N passed, M failed``;
one missing from the plain runs counts as failed.

Exits 1 when a counted scenario fails or a run holds no results, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

# "server-tools-list-2026-11-29T12-44-03-758Z": the runner's ISO time with ':' and '.' as '-'.
_SCENARIO_DIR = re.compile(r"^(?:server-)?(?P<name>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
_MESSAGE_WIDTH = 160


@dataclass(frozen=True, slots=True)
class Requirements:
    """The server leg of a runner requirement set."""

    required: tuple[str, ...]
    not_scored: dict[str, str]
    """Scenario -> reason (``extension``, ``pending``, ...)."""

    @property
    def pending(self) -> tuple[str, ...]:
        return tuple(name for name, reason in self.not_scored.items() if reason == "pending")


def read_requirements(text: str) -> Requirements:
    """Read the server lists of a requirement set.

    The file is frozen and flat (top-level keys; ``  - name`` items; ``not_scored``
    items of ``scenario``/``leg``/``reason`` pairs), so a line reader is enough and
    keeps the report free of a YAML dependency.
    """
    section = ""
    required: list[str] = []
    entries: list[dict[str, str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            section = line.split(":", 1)[0].strip()
            continue
        item = line.startswith("  - ")
        body = line[4:] if item else line.strip()
        if section == "server" and item:
            required.append(body.strip())
        elif section == "not_scored" and ":" in body and not line.startswith("      "):
            if item:
                entries.append({})
            if entries:
                key, _, value = body.partition(":")
                entries[-1][key.strip()] = value.strip()
    not_scored = {
        entry["scenario"]: entry.get("reason", "")
        for entry in entries
        if entry.get("leg") == "server" and "scenario" in entry
    }
    if not required:
        raise ValueError("no server scenarios in the requirement set")
    return Requirements(tuple(required), not_scored)


@dataclass(frozen=True, slots=True)
class Failure:
    check: str
    message: str


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    counts: Counter[str]
    failures: tuple[Failure, ...] = ()
    """FAILURE checks, then (when ``strict``) WARNING ones, then a failed runner."""
    readable: bool = True
    strict: bool = False
    """Client leg: a WARNING fails the scenario as a FAILURE does."""
    runner_status: int | None = None
    """The runner's exit status for this scenario, when known (client leg)."""
    directory: Path | None = None

    @property
    def passed(self) -> bool:
        if not self.readable or self.counts["SUCCESS"] == 0 or self.counts["FAILURE"]:
            return False
        if self.strict and self.counts["WARNING"]:
            return False
        return self.runner_status in (None, 0)

    @property
    def only_skipped(self) -> bool:
        """Every check was skipped or only informational (a harness the runner has not
        written, or a feature it merely probes): the runner reports that as passing, and
        so does the not-scored line, naming the scenario."""
        quiet = self.counts["SKIPPED"] + self.counts["INFO"]
        return self.readable and sum(self.counts.values()) == quiet > 0


def _unreadable(name: str, why: str, check: str = "checks.json") -> Scenario:
    return Scenario(name, Counter(), (Failure(check, why),), readable=False)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MESSAGE_WIDTH else flat[: _MESSAGE_WIDTH - 3] + "..."


def load_scenario(directory: Path, name: str, strict: bool = False) -> Scenario:
    try:
        checks: Any = json.loads((directory / "checks.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return _unreadable(name, f"no readable results: {exc}")
    if not isinstance(checks, list):
        return _unreadable(name, "not a JSON array")
    counts: Counter[str] = Counter()
    failures: list[Failure] = []
    warnings: list[Failure] = []
    for check in checks:
        if not isinstance(check, dict):
            continue
        status = str(check.get("status", "UNKNOWN"))
        counts[status] += 1
        if status == "FAILURE" or (strict and status == "WARNING"):
            message = str(check.get("errorMessage") or check.get("description") or "")
            check_id = str(check.get("id", "?"))
            if status == "FAILURE":
                failures.append(Failure(check_id, _one_line(message)))
            else:
                warnings.append(Failure(check_id, _one_line(f"warning: {message}")))
    return Scenario(name, counts, (*failures, *warnings), strict=strict, directory=directory)


def load_run(run: Path, strict: bool = False) -> list[Scenario]:
    """Every scenario of one run, sorted by name."""
    scenarios = []
    for directory in sorted(run.rglob("*")):
        found = _SCENARIO_DIR.match(directory.name)
        if directory.is_dir() and found:
            # Client auth scenarios nest one level (auth/<name>-<ts>); keep the prefix.
            prefix = directory.parent.relative_to(run).as_posix()
            name = found.group("name") if prefix == "." else f"{prefix}/{found.group('name')}"
            scenarios.append(load_scenario(directory, name, strict))
    return sorted(scenarios, key=lambda s: s.name)


def read_runner_status(text: str) -> dict[str, int]:
    """``<scenario> <exit status>`` lines; the last line for a scenario wins."""
    statuses: dict[str, int] = {}
    for line in text.splitlines():
        name, _, code = line.strip().rpartition(" ")
        if name and code.lstrip("-").isdigit():
            statuses[name] = int(code)
    return statuses


def _last_line(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def load_client_run(run: Path) -> list[Scenario]:
    """Every client scenario of one run, WARNING failing, with the runner's verdict."""
    scenarios = load_run(run, strict=True)
    try:
        statuses = read_runner_status((run / "runner-status").read_text(encoding="utf-8"))
    except OSError:
        return scenarios
    ran = {s.name for s in scenarios}
    for index, scenario in enumerate(scenarios):
        code = statuses.get(scenario.name)
        if code is None:
            continue
        failures = scenario.failures
        if code != 0:
            # Failed checks already say why; otherwise it was the client (exit or timeout).
            why = "see its checks" if failures else "the client failed or timed out"
            where = scenario.directory / "stderr.txt" if scenario.directory else None
            last = _last_line(where) if where is not None else ""
            detail = f"; client stderr: {last}" if last and not failures else ""
            failures = (*failures, Failure("runner", _one_line(f"exit {code}: {why}{detail}")))
        scenarios[index] = replace(scenario, failures=failures, runner_status=code)
    scenarios += [
        _unreadable(name, f"no results (runner exit {code})", "scenario")
        for name, code in statuses.items()
        if name not in ran
    ]
    return sorted(scenarios, key=lambda s: s.name)


def render(title: str, scenarios: list[Scenario], unscored: dict[str, str]) -> list[str]:
    width = max([len(s.name) for s in scenarios] + [len("scenario")])
    header = f"{'scenario':<{width}}  result  success  failure  warning"
    lines = [f"== {title}", header, "-" * len(header)]
    for s in scenarios:
        c = s.counts
        verdict = "pass" if s.passed else "skip" if s.only_skipped else "FAIL"
        note = f"  (not scored: {unscored[s.name]})" if s.name in unscored else ""
        lines.append(
            f"{s.name:<{width}}  {verdict:<6}  {c['SUCCESS']:>7}  {c['FAILURE']:>7}  "
            f"{c['WARNING']:>7}{note}"
        )
        lines.extend(f"    x {f.check}: {f.message}" for f in s.failures)
    return lines


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Summarise conformance runs (see the module docstring)."
    )
    parser.add_argument("runs", nargs="*", type=Path, help="runs where every scenario counts")
    parser.add_argument("--required", type=Path, action="append", default=[], metavar="DIR")
    parser.add_argument("--requirements", type=Path, metavar="YAML")
    parser.add_argument(
        "--client", type=Path, action="append", default=[], metavar="DIR", help="client runs"
    )
    parser.add_argument(
        "--only-required",
        action="store_true",
        help="the not-scored scenarios of --required runs decide nothing",
    )
    args = parser.parse_args(argv)
    if args.required and args.requirements is None:
        parser.error("--required needs --requirements")
    if not args.runs and not args.required and not args.client:
        parser.error("give at least one run directory")
    return args


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    requirements = (
        read_requirements(args.requirements.read_text(encoding="utf-8"))
        if args.requirements is not None
        else None
    )
    counted: list[Scenario] = []
    extras: list[Scenario] = []
    full: list[Scenario] = []
    empty: list[Path] = []
    for run in args.required:
        assert requirements is not None
        scenarios = load_run(run)
        ran = {s.name for s in scenarios}
        scenarios += [
            _unreadable(name, "required scenario did not run", "scenario")
            for name in requirements.required
            if name not in ran
        ]
        scenarios.sort(key=lambda s: s.name)
        unscored = {
            s.name: requirements.not_scored.get(s.name, "not in the requirement set")
            for s in scenarios
            if s.name not in requirements.required
        }
        scored = [s for s in scenarios if s.name not in unscored]
        title = f"{run.name}: {len(scored)} required scenarios (+{len(unscored)} not scored)"
        print("\n".join(render(title, scenarios, unscored)), end="\n\n")
        counted += scored
        extras += [s for s in scenarios if s.name in unscored]
        empty += [run] if not ran else []
    for run in args.runs:
        scenarios = load_run(run)
        print("\n".join(render(f"{run.name}: {len(scenarios)} scenarios", scenarios, {})))
        print()
        counted += scenarios
        full += scenarios
        empty += [run] if not scenarios else []
    for run in args.client:
        scenarios = load_client_run(run)
        title = f"{run.name}: {len(scenarios)} client scenarios (warnings fail)"
        print("\n".join(render(title, scenarios, {})), end="\n\n")
        counted += scenarios
        empty += [run] if not scenarios else []
    for name in requirements.pending if requirements else ():
        results = [s for s in full if s.name == name]
        if not results and args.runs:
            # A full run of the revision includes the pending scenarios; missing is a gap.
            counted.append(_unreadable(name, "pending scenario did not run", "scenario"))
        status = "not run" if not results else "pass" if all(s.passed for s in results) else "FAIL"
        print(f"pending {name}: {status}")
    for run in empty:
        print(f"no scenario results in {run}")
    skipped = [s.name for s in extras if s.only_skipped]
    if extras:
        good = sum(s.passed or s.only_skipped for s in extras)
        note = f" ({', '.join(skipped)}: only skipped or informational checks)" if skipped else ""
        print(f"not scored in the requirement run: {good} of {len(extras)} pass{note}")
    passed = sum(s.passed for s in counted)
    print(f"conformance: {passed} passed, {len(counted) - passed} failed")
    extras_pass = args.only_required or all(s.passed or s.only_skipped for s in extras)
    return 0 if passed == len(counted) and extras_pass and not empty else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
