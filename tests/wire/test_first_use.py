"""The generated packages build their models' and adapters' validators on first use
(defer_build), yet every model's fields are complete at import: a model's aliases and
types read before anything is built are those it has once built. Each model comes after
the models it names (generator/ordering.py), so importing a package builds none."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.paths import ROOT

PACKAGES = sorted(p.name for p in (ROOT / "generated").iterdir() if (p / "models.py").is_file())

_PROBE = """
import importlib, json, sys
import pydantic

report = {}
for package in sys.argv[1:]:
    models = importlib.import_module(package + ".models")
    adapters = importlib.import_module(package + ".adapters")
    classes = [
        value for value in vars(models).values()
        if isinstance(value, type) and issubclass(value, pydantic.BaseModel)
        and value.__module__ == models.__name__
    ]
    fields = {
        cls.__name__: {name: [f.alias, repr(f.annotation)] for name, f in cls.model_fields.items()}
        for cls in classes
    }
    typed = [v for v in vars(adapters).values() if isinstance(v, pydantic.TypeAdapter)]
    report[package] = {
        "models": len(classes),
        "built": sum(cls.__pydantic_complete__ for cls in classes),
        "incomplete": [cls.__name__ for cls in classes if not cls.__pydantic_fields_complete__],
        "adapters_built": sum(a.pydantic_complete for a in typed),
        "adapters": len(typed),
        "same_once_built": all(
            cls.model_rebuild() is not False
            and fields[cls.__name__]
            == {name: [f.alias, repr(f.annotation)] for name, f in cls.model_fields.items()}
            for cls in classes
        ),
    }
print(json.dumps(report))
"""


def _report() -> dict[str, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *PACKAGES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, dict[str, object]] = json.loads(done.stdout)
    return found


def test_fields_are_complete_at_import_and_every_model_builds_on_first_use() -> None:
    report = _report()
    assert set(report) == set(PACKAGES)
    for package, seen in report.items():
        assert seen["incomplete"] == [], package
        assert seen["same_once_built"] is True, package
        assert seen["adapters_built"] == 0, package
        assert seen["built"] == 0, package
        assert int(str(seen["models"])) > 0, package


def test_an_adapter_validates_on_first_use() -> None:
    from snodo_wire import adapters

    message = adapters.jsonrpc_message.validate_python(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    )
    assert adapters.jsonrpc_message.pydantic_complete
    assert json.loads(adapters.jsonrpc_message.dump_json(message))["method"] == "tools/list"
