"""The oracle both wire packages are checked against: JSON Schema 2020-12 over the raw
pinned schema, and the near-miss mutations that probe where models and schema part.

Support for the oracle tests of each revision; not a test module.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Iterator
from typing import Any

import jsonschema
from pydantic import TypeAdapter, ValidationError

WRONG_TYPE = {str: 12345, int: "12345", float: "1.5", bool: "true", list: {}, dict: []}


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index)
            yield from _paths(item, (*path, index))


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def mutations(example: Any) -> Iterator[tuple[str, Any]]:
    """Near misses: drop each object key, retype each value, break each tag."""
    if not isinstance(example, dict | list):
        yield "retype ()", WRONG_TYPE[type(example)]
    for path in _paths(example):
        parent, key = _get(example, path[:-1]), path[-1]
        if isinstance(parent, dict):
            dropped = copy.deepcopy(example)
            del _get(dropped, path[:-1])[key]
            yield f"drop {path}", dropped
        current = parent[key]
        retyped = copy.deepcopy(example)
        _get(retyped, path[:-1])[key] = WRONG_TYPE[type(current)]
        yield f"retype {path}", retyped
        if key in ("method", "type", "jsonrpc", "action", "role") and isinstance(current, str):
            renamed = copy.deepcopy(example)
            _get(renamed, path[:-1])[key] = current + "-bogus"
            yield f"bad tag {path}", renamed


class Oracle:
    """Accept/reject decisions of the raw schema and of one generated package."""

    def __init__(self, raw_schema: dict[str, Any], package: str) -> None:
        self._defs = raw_schema["$defs"]
        self._models = importlib.import_module(package)
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}
        self._adapters: dict[str, TypeAdapter[object]] = {}

    def schema_accepts(self, name: str, instance: Any) -> bool:
        if name not in self._validators:
            schema = {"$defs": self._defs, "$ref": f"#/$defs/{name}"}
            self._validators[name] = jsonschema.Draft202012Validator(schema)
        return bool(self._validators[name].is_valid(instance))

    def model_accepts(self, name: str, instance: Any) -> bool:
        if name not in self._adapters:
            self._adapters[name] = TypeAdapter(getattr(self._models, name))
        try:
            self._adapters[name].validate_json(json.dumps(instance))
        except ValidationError:
            return False
        return True

    def disagreements(self, name: str, instance: Any) -> tuple[int, list[str]]:
        """How many mutations were tried, and those on which the two disagree."""
        found, checked = [], 0
        for label, mutant in mutations(instance):
            checked += 1
            oracle = self.schema_accepts(name, mutant)
            if oracle != self.model_accepts(name, mutant):
                found.append(f"{label}: schema {'accepts' if oracle else 'rejects'}")
        return checked, found
