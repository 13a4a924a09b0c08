"""Validation cost per message: snodo_wire against schema validators and the official mcp-types.

Run from the repository root (no network needed):

    .venv/bin/python bench/validation.py [--repeat 5] [--min-time 0.2]

It reads the pinned schema and three spec examples from
``$SNODO_SCHEMA_DIR/2026-07-28/`` (default: ``../shared/mcp-schema`` beside the checkout):

* ``CallToolRequest/call-tool-request.json``
* ``InputRequiredResult/input-required-result-with-elicitation-and-sampling-and-request-state.json``
  (the richest one: an elicitation request and a sampling request in ``inputRequests``)
* ``CreateMessageResult/tool-use-response.json`` (array content, two ``tool_use`` blocks)

and for each message times, in one process, side by side:

* ``snodo_wire.<Name>.model_validate_json(bytes)`` and ``.model_validate(dict)``;
* a ``jsonschema_rs`` validator compiled once with ``validator_for`` from
  ``{"$ref": "#/$defs/<Name>", "$defs": ...}`` of the raw ``schema.json`` (2020-12, offline,
  formats not asserted, as 2020-12 specifies), calling ``validate(dict)``;
* ``fastjsonschema`` compiled from the same definitions rewritten to draft-07
  (``$defs`` -> ``definitions``; ``use_formats=False``, ``use_default=False`` so it neither
  asserts formats nor writes defaults into the instance). Nothing breaks: besides ``$defs``
  the schema uses no keyword newer than draft-07 and no ``$ref`` with sibling keywords;
* the official ``mcp-types`` models: the public, version-superset class in ``mcp_types``
  and the schema-exact wire class in ``mcp_types._v2026_07_28``, when one exists ("n/a"
  otherwise). The public namespace splits CreateMessageResult: array content, as in this
  example, is ``CreateMessageResultWithTools``. The public CallToolRequest leaves the
  JSON-RPC envelope and ``_meta`` unchecked, so it does less work than the others.

Columns: **bytes** is the cost from the raw JSON bytes. For the pydantic models that is
``model_validate_json``; for the two schema validators, which only take Python objects,
it is ``json.loads`` *plus* validation, and a ``json.loads`` row shows the parse cost
alone. **dict** is the cost from an already parsed ``dict`` (``model_validate`` or the
schema validator alone). The pydantic columns build model instances; the schema
validators only answer valid/invalid, so they do less work.

Each number is the median of ``--repeat`` (>= 5) runs of ``timeit`` (garbage collector
off), each run long enough to take at least ``--min-time`` seconds, divided by the
iteration count: microseconds per call, call overhead of a ``functools.partial``
included, nothing subtracted. The runs of one message's cells are interleaved round-robin
so that a noisy phase of the machine hits all validators alike; ``spread`` is the largest
(slowest - fastest run) / median of the row, to show how far to trust it.

Before timing, every validator must accept the example and reject mutated copies with a
required field removed (nested ones and a top-level one). Any deviation is printed as a
``WARN`` line under the table and marked in the ``check`` column; the validator is still
timed.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from types import ModuleType
from typing import Any

import fastjsonschema
import jsonschema_rs
import mcp_types
import mcp_types._v2026_07_28 as mcp_wire
import pydantic

import snodo_wire

ROOT = Path(__file__).resolve().parent.parent
REVISION = "2026-07-28"

JSON = dict[str, Any]
KeyPath = tuple[str | int, ...]

# What a validator raises for a message it refuses. Anything else is a bug and propagates.
REJECTIONS: tuple[type[Exception], ...] = (
    pydantic.ValidationError,
    jsonschema_rs.ValidationError,
    fastjsonschema.JsonSchemaValueException,
)


@dataclass(frozen=True)
class Message:
    """One benchmarked message: its schema definition, example file and mutations."""

    definition: str
    """Schema definition name, which is also the snodo_wire class name."""
    example: str
    """File name under ``examples/<definition>/``."""
    mutations: tuple[KeyPath, ...]
    """Key paths of required fields; each mutant drops one of them."""
    mcp_public: str | None
    """Equivalent class in the public ``mcp_types`` namespace, if any."""
    mcp_wire: str | None
    """Equivalent class in ``mcp_types._v2026_07_28`` (schema-exact wire shapes), if any."""


MESSAGES: tuple[Message, ...] = (
    Message(
        definition="CallToolRequest",
        example="call-tool-request.json",
        mutations=(
            ("params", "name"),
            ("params", "_meta", "io.modelcontextprotocol/protocolVersion"),
            ("jsonrpc",),
        ),
        mcp_public="CallToolRequest",
        mcp_wire="CallToolRequest",
    ),
    Message(
        definition="InputRequiredResult",
        example="input-required-result-with-elicitation-and-sampling-and-request-state.json",
        mutations=(("inputRequests", "capital_of_france", "params", "maxTokens"), ("resultType",)),
        mcp_public="InputRequiredResult",
        mcp_wire="InputRequiredResult",
    ),
    Message(
        definition="CreateMessageResult",
        example="tool-use-response.json",
        mutations=(("content", 1, "name"), ("model",)),
        # mcp_types splits the schema's CreateMessageResult in two: `CreateMessageResult`
        # takes a single content block only, array content is `CreateMessageResultWithTools`.
        mcp_public="CreateMessageResultWithTools",
        mcp_wire="CreateMessageResult",
    ),
)


@dataclass(frozen=True)
class Validator:
    """A way of validating one message, from raw bytes and from a parsed dict."""

    label: str
    from_bytes: Callable[[bytes], object]
    from_dict: Callable[[JSON], object] | None
    kind: str
    """Column group for the ratio summary: "snodo", "mcp-public", "mcp-wire" or "schema"."""


@dataclass
class Row:
    """One line of the result table."""

    message: str
    label: str
    bytes_us: float | None
    dict_us: float | None
    check: str
    kind: str
    spread: float | None
    """Largest (slowest - fastest run) / median among the row's cells."""


# --------------------------------------------------------------------------- inputs


def schema_root() -> Path:
    """``$SNODO_SCHEMA_DIR/2026-07-28``, defaulting to ../shared/mcp-schema beside the repo."""
    configured = os.environ.get("SNODO_SCHEMA_DIR")
    base = Path(configured) if configured else ROOT.parent / "shared" / "mcp-schema"
    return base / REVISION


def load_schema(root: Path) -> JSON:
    path = root / "schema.json"
    if not path.is_file():
        sys.exit(f"schema not found at {path}; set SNODO_SCHEMA_DIR")
    schema: JSON = json.loads(path.read_bytes())
    return schema


def without(document: JSON, path: KeyPath) -> JSON:
    """A deep copy of ``document`` with the key at ``path`` removed (it must exist)."""
    mutant = copy.deepcopy(document)
    parent: Any = mutant
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return mutant


def model_class(module: ModuleType, name: str) -> type[pydantic.BaseModel]:
    cls = getattr(module, name)
    if not (isinstance(cls, type) and issubclass(cls, pydantic.BaseModel)):
        raise TypeError(f"{module.__name__}.{name} is not a pydantic model")
    return cls


# --------------------------------------------------------------------------- validators


def pydantic_validator(label: str, cls: type[pydantic.BaseModel], kind: str) -> Validator:
    return Validator(label, cls.model_validate_json, cls.model_validate, kind)


def rewrite_refs(node: Any, old: str, new: str) -> Any:
    """``node`` with every ``$ref`` starting with ``old`` pointed at ``new`` instead."""
    if isinstance(node, dict):
        return {
            key: (
                new + value[len(old) :]
                if key == "$ref" and isinstance(value, str) and value.startswith(old)
                else rewrite_refs(value, old, new)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [rewrite_refs(item, old, new) for item in node]
    return node


def schema_validators(
    schema: JSON, name: str, setup_ms: dict[str, float]
) -> tuple[Validator, Validator]:
    """jsonschema_rs (2020-12, as published) and fastjsonschema (rewritten to draft-07)."""
    started = time.perf_counter()
    rs = jsonschema_rs.validator_for(
        {"$schema": schema["$schema"], "$ref": f"#/$defs/{name}", "$defs": schema["$defs"]},
        validate_formats=False,
        offline=True,
    )
    setup_ms["jsonschema_rs"] = (time.perf_counter() - started) * 1e3

    # The schema uses no keyword newer than draft-07 (only $defs, which is renamed here) and
    # no $ref with sibling keywords, so the draft-07 reading is the same as the 2020-12 one.
    draft07 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": f"#/definitions/{name}",
        "definitions": rewrite_refs(schema["$defs"], "#/$defs/", "#/definitions/"),
    }
    started = time.perf_counter()
    fast = fastjsonschema.compile(draft07, use_formats=False, use_default=False)
    setup_ms["fastjsonschema"] = (time.perf_counter() - started) * 1e3

    def rs_bytes(raw: bytes) -> None:
        rs.validate(json.loads(raw))

    def fast_bytes(raw: bytes) -> object:
        return fast(json.loads(raw))

    return (
        Validator("jsonschema_rs validate [bytes: +json.loads]", rs_bytes, rs.validate, "schema"),
        Validator("fastjsonschema draft-07 [bytes: +json.loads]", fast_bytes, fast, "schema"),
    )


def validators_for(message: Message, schema: JSON, setup_ms: dict[str, float]) -> list[Validator]:
    name = message.definition
    found = [pydantic_validator(f"snodo_wire.{name}", model_class(snodo_wire, name), "snodo")]
    found.extend(schema_validators(schema, name, setup_ms))
    for kind, module, cls_name in (
        ("mcp-public", mcp_types, message.mcp_public),
        ("mcp-wire", mcp_wire, message.mcp_wire),
    ):
        if cls_name is not None:
            label = f"{module.__name__}.{cls_name}"
            found.append(pydantic_validator(label, model_class(module, cls_name), kind))
    return found


# --------------------------------------------------------------------------- checks


def accepted(validator: Validator, document: JSON, raw: bytes | None = None) -> dict[str, bool]:
    """Whether ``validator`` accepts ``document`` as JSON bytes (``raw`` if given) and as a dict."""
    encoded = raw if raw is not None else json.dumps(document).encode()
    inputs: dict[str, Callable[[], object]] = {
        "bytes": functools.partial(validator.from_bytes, encoded)
    }
    if validator.from_dict is not None:
        inputs["dict"] = functools.partial(validator.from_dict, copy.deepcopy(document))
    verdicts: dict[str, bool] = {}
    for form, call in inputs.items():
        try:
            call()
        except REJECTIONS:
            verdicts[form] = False
        else:
            verdicts[form] = True
    return verdicts


def show_path(path: KeyPath) -> str:
    """``params._meta["io.modelcontextprotocol/protocolVersion"]``-style rendering of a path."""
    shown = ""
    for key in path:
        if isinstance(key, str) and key.isidentifier():
            shown += f".{key}" if shown else key
        else:
            shown += f"[{json.dumps(key)}]"
    return shown


def sanity_check(validator: Validator, raw: bytes, document: JSON, message: Message) -> list[str]:
    """Problems found: the example refused, or a mutant with a required field dropped accepted."""
    problems: list[str] = []
    refused = [form for form, ok in accepted(validator, document, raw).items() if not ok]
    if refused:
        problems.append(f"rejects the example ({', '.join(refused)})")
    for path in message.mutations:
        passed = [form for form, ok in accepted(validator, without(document, path)).items() if ok]
        if passed:
            problems.append(f"accepts it without {show_path(path)} ({', '.join(passed)})")
    return problems


# --------------------------------------------------------------------------- timing


@dataclass
class Timing:
    """One timed cell: a call, its iteration count per run, and the runs' µs per call."""

    call: Callable[[], object]
    number: int = 0
    per_call_us: list[float] = field(default_factory=list)

    def calibrate(self, min_time: float) -> None:
        """Find an iteration count whose run takes at least ``min_time`` seconds."""
        timer = timeit.Timer(self.call)
        number = 1
        while (elapsed := timer.timeit(number)) < min_time:
            # Aim 20 % past the target so that a run on a quieter moment still clears it.
            wanted = int(number * min_time * 1.2 / max(elapsed, 1e-9)) + 1
            number = max(number * 2, min(wanted, number * 100))
        self.number = number

    def run(self) -> None:
        elapsed = timeit.Timer(self.call).timeit(self.number)
        self.per_call_us.append(elapsed / self.number * 1e6)

    @property
    def median(self) -> float:
        return statistics.median(self.per_call_us)

    @property
    def spread(self) -> float:
        """(slowest - fastest run) / median."""
        return (max(self.per_call_us) - min(self.per_call_us)) / self.median


def run_interleaved(timings: list[Timing], repeat: int, min_time: float) -> None:
    """Calibrate every cell, then time them round-robin, ``repeat`` rounds.

    Interleaving spreads slow phases of a noisy machine over all validators of a message
    instead of charging them to whichever happened to be running.
    """
    for timing in timings:
        timing.calibrate(min_time)
    for _ in range(repeat):
        for timing in timings:
            timing.run()


def bench_message(
    message: Message, schema: JSON, root: Path, repeat: int, min_time: float
) -> tuple[list[Row], list[str], dict[str, float]]:
    path = root / "examples" / message.definition / message.example
    raw = path.read_bytes()
    document: JSON = json.loads(raw)
    setup_ms: dict[str, float] = {}
    warnings: list[str] = []

    parse = Timing(functools.partial(json.loads, raw))
    cells: list[tuple[Validator, str, Timing, Timing | None]] = []
    for validator in validators_for(message, schema, setup_ms):
        problems = sanity_check(validator, raw, document, message)
        warnings.extend(f"WARN {message.definition} / {validator.label}: {p}" for p in problems)
        check = "ok" if not problems else f"WARN({len(problems)})"
        from_bytes = Timing(functools.partial(validator.from_bytes, raw))
        from_dict = (
            Timing(functools.partial(validator.from_dict, document))
            if validator.from_dict is not None
            else None
        )
        cells.append((validator, check, from_bytes, from_dict))

    run_interleaved(
        [parse, *(t for _, _, b, d in cells for t in (b, d) if t is not None)], repeat, min_time
    )

    label = "json.loads alone (included in [bytes] rows)"
    rows = [Row(message.definition, label, parse.median, None, "", "parse", parse.spread)]
    for validator, check, from_bytes, from_dict in cells:
        spread = max(t.spread for t in (from_bytes, from_dict) if t is not None)
        rows.append(
            Row(
                message.definition,
                validator.label,
                from_bytes.median,
                from_dict.median if from_dict is not None else None,
                check,
                validator.kind,
                spread,
            )
        )
    for kind, cls_name in (("mcp-public", message.mcp_public), ("mcp-wire", message.mcp_wire)):
        if cls_name is None:
            module = "mcp_types" if kind == "mcp-public" else mcp_wire.__name__
            rows.append(
                Row(message.definition, f"{module} (no equivalent)", None, None, "", kind, None)
            )
    return rows, warnings, setup_ms


# --------------------------------------------------------------------------- report


def fmt_us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def fmt_spread(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def fmt_ratio(snodo: float | None, other: float | None) -> str:
    return "n/a" if snodo is None or other is None else f"{snodo / other:.2f}x"


def print_table(rows: list[Row]) -> None:
    width = max(len(row.label) for row in rows)
    header = (
        f"{'message':<20} {'validator':<{width}} {'bytes µs':>9} {'dict µs':>9}"
        f" {'spread':>7}  check"
    )
    print(header)
    print("-" * len(header))
    previous = ""
    for row in rows:
        name = row.message if row.message != previous else ""
        previous = row.message
        print(
            f"{name:<20} {row.label:<{width}} {fmt_us(row.bytes_us):>9} "
            f"{fmt_us(row.dict_us):>9} {fmt_spread(row.spread):>7}  {row.check}".rstrip()
        )


def print_ratios(rows: list[Row]) -> None:
    print()
    print("snodo / mcp-types (time ratio; <= 1.00x means snodo is at least as fast)")
    header = (
        f"{'message':<20} {'vs public bytes':>16} {'vs public dict':>15}"
        f" {'vs wire bytes':>14} {'vs wire dict':>13}"
    )
    print(header)
    print("-" * len(header))
    for message in MESSAGES:
        mine = {row.kind: row for row in rows if row.message == message.definition}
        snodo = mine["snodo"]
        cells: list[str] = []
        for kind, width in (("mcp-public", 16), ("mcp-wire", 14)):
            other = mine.get(kind)
            cells.append(f"{fmt_ratio(snodo.bytes_us, other.bytes_us if other else None):>{width}}")
            cells.append(
                f"{fmt_ratio(snodo.dict_us, other.dict_us if other else None):>{width - 1}}"
            )
        print(f"{message.definition:<20} {' '.join(cells)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per cell (>= 5)")
    parser.add_argument(
        "--min-time", type=float, default=0.2, help="minimum seconds per timed run (>= 0.2)"
    )
    args = parser.parse_args()
    repeat: int = max(args.repeat, 5)
    min_time: float = max(args.min_time, 0.2)

    root = schema_root()
    schema = load_schema(root)
    print(f"schema: {root / 'schema.json'}")
    print(
        f"python {platform.python_version()}, pydantic {pydantic.VERSION}, "
        f"pydantic-core {version('pydantic-core')}, jsonschema-rs {version('jsonschema-rs')}, "
        f"fastjsonschema {version('fastjsonschema')}, mcp-types {version('mcp-types')}"
    )
    print(f"median of {repeat} runs of >= {min_time} s each; µs per call\n")

    rows: list[Row] = []
    warnings: list[str] = []
    setups: list[str] = []
    for message in MESSAGES:
        message_rows, message_warnings, setup_ms = bench_message(
            message, schema, root, repeat, min_time
        )
        rows.extend(message_rows)
        warnings.extend(message_warnings)
        setups.append(
            f"{message.definition}: "
            + ", ".join(f"{name} {ms:.1f} ms" for name, ms in setup_ms.items())
        )

    print_table(rows)
    print_ratios(rows)
    print("\none-off compile cost (not in the table):")
    for line in setups:
        print(f"  {line}")
    if warnings:
        print("\nsanity-check warnings (validator still timed):")
        for line in warnings:
            print(f"  {line}")
    else:
        print("\nsanity checks: every validator accepts each example and rejects every mutant")


if __name__ == "__main__":
    main()
