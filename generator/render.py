"""Compile one pinned revision (schema + pin + overlay) into its wire package.

Models come from datamodel-code-generator (pinned exactly in pyproject.toml, run with
the option set below); the tables, error codes and adapters come from jinja2
templates over schema + overlay. ruff runs last, with fixed settings and no config
discovery, so the bytes do not depend on where the output is written.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel

from generator.facts import Facts, collect
from generator.ordering import dependency_order
from generator.overlay import Overlay
from generator.prepass import prepare
from generator.revisions import check_pairing
from generator.source import ROOT, Pin

TEMPLATES = ROOT / "templates"

# The models these make are described in docs/wire.md. --disable-future-imports: the
# annotations are plain Python, evaluated as each class is made (no string to parse at
# every import); the names a model uses before they are defined are quoted, until
# generator/ordering.py moves the model after them.
CODEGEN_OPTIONS = (
    "--input-file-type=jsonschema",
    "--output-model-type=pydantic_v2.BaseModel",
    "--target-python-version=3.11",
    "--target-pydantic-version=2.14",
    "--use-generic-base-class",
    "--extra-fields=allow",
    "--allow-population-by-field-name",
    "--skip-root-model",
    "--use-annotated",
    "--field-constraints",
    "--use-standard-collections",
    "--use-union-operator",
    "--snake-case-field",
    "--remove-special-field-name-prefix",
    "--use-type-alias",
    "--use-missing-sentinel",
    "--type-mappings",
    "byte=string",
    "uri=string",
    "date-time=string",
    "email=string",
    "--strict-types",
    "str",
    "bool",
    "int",
    "float",
    "--enum-field-as-literal=all",
    "--use-schema-description",
    "--use-double-quotes",
    "--disable-timestamp",
    "--no-formatters",
    "--disable-future-imports",
)

RUFF_SETTINGS = ("--isolated", "--line-length=100", "--target-version=py311")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _pytuple(values: Any) -> str:
    items = [json.dumps(str(v)) for v in values]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["snake"] = _snake
    env.filters["pytuple"] = _pytuple
    return env


def _header(env: jinja2.Environment, pin: Pin) -> str:
    return env.get_template("header.jinja").render(pin=pin).rstrip("\n")


def _run(args: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} failed:\n{done.stdout}\n{done.stderr}")


def _models(prepared: Any, header: str, target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        schema_file = Path(tmp) / "schema.json"
        schema_file.write_text(json.dumps(prepared, indent=1, sort_keys=True), encoding="utf-8")
        _run(
            [
                sys.executable,
                "-m",
                "datamodel_code_generator",
                f"--input={schema_file}",
                f"--output={target}",
                f"--custom-template-dir={TEMPLATES / 'models'}",
                f"--custom-file-header={header}",
                *CODEGEN_OPTIONS,
            ]
        )
    target.write_text(dependency_order(target.read_text(encoding="utf-8")), encoding="utf-8")


def render_package(schema: Any, out_dir: Path, pin: Pin, overlay: Overlay) -> None:
    """Write the whole package into ``out_dir`` (created, and expected to be empty)."""
    check_pairing(pin, overlay)
    prepared = prepare(schema, overlay)
    facts: Facts = collect(prepared, overlay, str(schema.get("$id", "")))
    env = _environment()
    out_dir.mkdir(parents=True, exist_ok=True)
    _models(prepared, _header(env, pin), out_dir / "models.py")
    names = ["__init__.py", "protocol.py", "adapters.py"]
    if overlay.document is None:  # a document has no methods to tabulate
        names.append("tables.py")
    if facts.errors:  # an extension that defines no error of its own has no errors module
        names.append("errors.py")
    for name in names:
        text = env.get_template(f"{name}.jinja").render(pin=pin, overlay=overlay, facts=facts)
        (out_dir / name).write_text(text, encoding="utf-8")
    (out_dir / "py.typed").write_text("", encoding="utf-8")
    ruff = [sys.executable, "-m", "ruff"]
    _run([*ruff, "check", *RUFF_SETTINGS, "--select=I,F401,UP", "--fix", "--quiet", str(out_dir)])
    _run([*ruff, "format", *RUFF_SETTINGS, "--quiet", str(out_dir)])


def clashes(package_dir: Path) -> list[str]:
    """Fields whose wire name is taken on a pydantic model (``validate``, ``copy``,
    ``json``, ``schema``, ``model_dump``, ...): each is generated under another attribute
    name with the wire name as alias. Reading ``obj.validate`` would give pydantic's
    method, so each is said at generation with the attribute to use."""
    tree = ast.parse((package_dir / "models.py").read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            alias = _alias(item)
            attribute = item.target.id
            if alias is not None and alias.lstrip("_") != attribute and hasattr(BaseModel, alias):
                found.append(
                    f"{node.name}.{alias} clashes with pydantic's BaseModel.{alias}: "
                    f"it is the attribute {attribute} (alias {alias!r} on the wire)"
                )
    return found


def _alias(item: ast.AnnAssign) -> str | None:
    for node in ast.walk(item):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Field":
            for keyword in node.keywords:
                if keyword.arg == "alias" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return None
