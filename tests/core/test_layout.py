"""The runtime's shape: no import cycles, small modules, protocol constants from one place.

Every import counts, type-checking-only and function-local ones included: a cycle hidden
under ``TYPE_CHECKING`` is still two modules that must change together.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from snodo_wire.protocol import (
    LATEST_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    REVISION,
    SUPPORTED_PROTOCOL_VERSIONS,
)

PACKAGE = Path(__file__).resolve().parents[2] / "snodo"
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The snodo modules ``name`` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from snodo import state`` imports the module snodo.state, not the package
            # (whose __init__ runs first for any submodule, so it is no edge of its own).
            for alias in node.names:
                module = f"{base}.{alias.name}"
                targets.append(module if module in known else base)
        for target in targets:
            if target in known and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the chain of modules that closes it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found is not None:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found is not None:
                return found
    return None


def test_the_graph_sees_type_checking_imports() -> None:
    """A cycle detector that misses TYPE_CHECKING imports would pass vacuously."""
    graph = _graph()
    assert "snodo.server" in graph["snodo.transports.http"]
    assert "snodo.replay" in graph["snodo.keyring"]  # imported for type checking only
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_snodo() -> None:
    assert _cycle(_graph()) is None


def test_no_runtime_module_over_the_limit() -> None:
    sizes = {name: len(path.read_text().splitlines()) for name, path in _modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_protocol_constants_come_from_the_generated_package() -> None:
    """A spec bump regenerates snodo_wire and touches no runtime module."""
    versions = {REVISION, LATEST_PROTOCOL_VERSION, *SUPPORTED_PROTOCOL_VERSIONS}
    namespace = META_CLIENT_CAPABILITIES.rpartition("/")[0] + "/"
    dated = re.compile(r"\b20\d\d-\d\d-\d\d\b")
    found = []
    for name, path in _modules().items():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if namespace in line or any(v in line for v in versions) or dated.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == []
