"""The runtime's shape: packages by role in one direction, no import cycles, a core
within its line budget, modules of one concept each, protocol constants from one place.

Every import counts, type-checking-only and function-local ones included: a cycle hidden
under ``TYPE_CHECKING`` is still two modules that must change together.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Mapping
from pathlib import Path

from snodo_wire.protocol import (
    LATEST_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    REVISION,
    SUPPORTED_PROTOCOL_VERSIONS,
)

PACKAGE = Path(__file__).resolve().parents[2] / "snodo"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
MAX_LINES = 800
"""A module past this is more than one concept; a long one concept stays whole."""
CORE_BUDGET = 5000
"""Lines of ``snodo/core/``, all told: the handwritten runtime stays small enough to read."""

CORE = "core"
"""``snodo/core/``: the protocol core every role shares."""

REVISIONS = "revisions"
"""The revision registry: below the core, the one way to the generated wire packages."""

_ROLES: dict[str, frozenset[str]] = {
    CORE: frozenset(),
    "asking": frozenset({CORE}),
    "stores": frozenset({CORE}),
    "auth": frozenset({"stores"}),
    "oauth": frozenset(),
    "server": frozenset({CORE, "asking", "stores", "auth"}),
    "legacy": frozenset({CORE, "stores", "server"}),
    "publishing": frozenset({CORE, "server"}),
    "transports": frozenset({CORE, "auth", "legacy", "server", "publishing"}),
    "search": frozenset({CORE, "server"}),
    "middleware": frozenset({CORE, "stores", "server"}),
    # server: the in-memory transport; search: tools searched here for a
    # server that searches none
    "client": frozenset({CORE, "asking", "server", "search"}),
    "otel": frozenset({CORE}),
    "gateway": frozenset({CORE, "stores", "server", "client"}),
    # Above the server, the client and the gateway: each extension's halves together.
    "extensions": frozenset(
        {CORE, "asking", "stores", "auth", "server", "otel", "client", "gateway"}
    ),
    "cli": frozenset(
        {
            CORE,
            "asking",
            "stores",
            "server",
            "transports",
            "otel",
            "client",
            "oauth",
            "gateway",
            "extensions",
            "search",
            "middleware",
            "publishing",
        }
    ),
}
MAY_IMPORT: dict[str, frozenset[str]] = {
    **{name: allowed | {REVISIONS} for name, allowed in _ROLES.items()},
    REVISIONS: frozenset(),
}
"""Each package by role, and the packages it may import: the arrows of
docs/architecture.md. The core imports only the revision registry, which imports no
package; nothing imports the command line."""

GENERATED = frozenset({"snodo.revisions.catalog"})
"""Runtime modules the generator renders: the catalog names the revisions' versions."""


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
            # ``from snodo import state`` imports the module snodo.core.state, not the package
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


def _package(module: str) -> str | None:
    """The role a module belongs to (None: the facade snodo/__init__ and __main__)."""
    if module in ("snodo", "snodo.__main__"):
        return None
    return module.split(".")[1]


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, imported in _graph().items():
        source = _package(module)
        if source is None:
            continue
        targets = {_package(name) for name in imported} - {source, None}
        graph.setdefault(source, set()).update(t for t in targets if t is not None)
    return graph


def _cycle(graph: Mapping[str, Collection[str]]) -> list[str] | None:
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
    # imported for type checking only:
    assert "snodo.core.state.replay" in graph["snodo.core.state.keyring"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_snodo() -> None:
    assert _cycle(_graph()) is None


def test_no_runtime_module_over_the_limit() -> None:
    sizes = {name: len(path.read_text().splitlines()) for name, path in _modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_the_core_is_within_its_line_budget() -> None:
    lines = sum(len(path.read_text().splitlines()) for path in (PACKAGE / CORE).rglob("*.py"))
    assert 0 < lines <= CORE_BUDGET, lines


def test_the_package_root_holds_only_the_facade() -> None:
    """Every module belongs to a role's folder: the root is the public names and the
    command's entry."""
    assert sorted(path.name for path in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py"]


def test_no_module_is_named_after_a_split() -> None:
    """A file cut out of another to stay short is named for the cut, not for a concept."""
    split = re.compile(r"(_part\d*|_more|_extra|_rest|_\d+)$|^resource_decorators$")
    assert [name for name in _modules() if split.search(name.rpartition(".")[2])] == []


def test_protocol_constants_come_from_the_generated_package() -> None:
    """A spec bump regenerates snodo_wire and touches no runtime module."""
    versions = {REVISION, LATEST_PROTOCOL_VERSION, *SUPPORTED_PROTOCOL_VERSIONS}
    namespace = META_CLIENT_CAPABILITIES.rpartition("/")[0] + "/"
    dated = re.compile(r"\b20\d\d-\d\d-\d\d\b")
    found = []
    for name, path in _modules().items():
        if name in GENERATED:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if namespace in line or any(v in line for v in versions) or dated.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == []


def test_each_package_imports_only_the_packages_below_it() -> None:
    graph = _package_graph()
    assert set(graph) == set(MAY_IMPORT)
    beyond = {name: sorted(found - MAY_IMPORT[name]) for name, found in graph.items()}
    assert {name: extra for name, extra in beyond.items() if extra} == {}


def test_the_allowed_arrows_point_one_way() -> None:
    assert _cycle(MAY_IMPORT) is None
    assert MAY_IMPORT[CORE] == frozenset({REVISIONS})
    assert MAY_IMPORT[REVISIONS] == frozenset()
    assert not any("cli" in allowed for allowed in MAY_IMPORT.values())


def test_the_package_graph_sees_a_backward_import() -> None:
    """The package check would pass vacuously if it missed edges."""
    graph = _package_graph()
    assert "server" in graph["transports"]
    assert "stores" in graph["server"]
    assert _package("snodo.core.jsonrpc") == CORE
    assert _package("snodo.core.state.keyring") == CORE
    assert _package("snodo.stores") == "stores"
    assert _package("snodo") is None


def test_every_package_says_what_it_may_import() -> None:
    for name in MAY_IMPORT:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert doc is not None and "import" in doc, name


def test_the_architecture_page_lists_the_packages_on_disk() -> None:
    """docs/architecture.md names each package in its table; a new or removed package
    fails here until the page says where it stands."""
    listed = set(re.findall(r"^\| `snodo/(\w+)/`", ARCHITECTURE.read_text(), re.MULTILINE))
    on_disk = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert listed == on_disk
    assert on_disk == set(MAY_IMPORT)


def _setup_value(name: str) -> object:
    """A literal assigned at the top of setup.py (read, not run: running it builds)."""
    tree = ast.parse((PACKAGE.parent / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f"setup.py assigns no {name}")


def test_the_compiled_build_covers_the_core() -> None:
    """Every module of snodo/core/ is compiled, or left as Python with a reason."""
    compiled = _setup_value("COMPILED")
    pure = _setup_value("PURE_CORE")
    assert isinstance(compiled, list) and isinstance(pure, dict)
    core = {path.relative_to(PACKAGE.parent).as_posix() for path in (PACKAGE / CORE).rglob("*.py")}
    assert core - set(compiled) == set(pure)
    assert all(isinstance(reason, str) and reason for reason in pure.values())
    assert len(compiled) == len(set(compiled))
    assert all((PACKAGE.parent / path).is_file() for path in compiled)


EXTENSIONS = "snodo.extensions"
"""The wing: each extension snodo ships in a folder of its own, closed to the rest."""

EXTENSION_ENTRIES: dict[str, frozenset[str]] = {
    # The wing's own package re-exports each extension's public names (and its gateway
    # halves, for ``snodo proxy``).
    EXTENSIONS: frozenset({f"{EXTENSIONS}.{name}" for name in ("apps", "skills", "tasks")}),
}
"""Modules outside an extension's folder that may import it, and what of it: only an
extension's package (its public names), never a module inside it."""

ENTRY_ROLES = frozenset({"cli"})
"""Roles whose modules may import the wing's package and each extension's package: the
command line offers the extensions (``snodo proxy`` passes their gateway halves on,
``snodo list`` reads a server's skills)."""


def _extension_of(module: str) -> str | None:
    """``snodo.extensions.<name>`` for a module inside an extension's folder, else None."""
    parts = module.split(".")
    if len(parts) >= 3 and ".".join(parts[:2]) == EXTENSIONS:
        return ".".join(parts[:3])
    return None


def _wing_breaches(graph: Mapping[str, Collection[str]]) -> list[str]:
    """Each import of an extension's module from outside its folder that no entry
    point above allows, as ``importer -> imported``."""
    packages = {_extension_of(module) for module in graph} - {None}
    breaches = []
    for importer, imported in sorted(graph.items()):
        own = _extension_of(importer)
        allowed = EXTENSION_ENTRIES.get(importer, frozenset())
        if _package(importer) in ENTRY_ROLES:
            allowed = allowed | packages | {EXTENSIONS}
        for target in sorted(imported):
            home = _extension_of(target)
            wing = home is not None or target == EXTENSIONS
            if not wing or (home is not None and home == own):
                continue
            if target not in allowed:
                breaches.append(f"{importer} -> {target}")
    return breaches


def test_each_extension_is_reached_only_through_its_entry_points() -> None:
    """Nothing outside ``snodo/extensions/<name>/`` imports that extension but its
    entry points: ``snodo.extensions`` re-exports each one's public names, and the
    command line imports the wing's package or an extension's package, never a module
    inside one. The rest of snodo reaches an extension only through the public
    extension APIs (``snodo.server.extensions``, ``snodo.client.extensions``,
    ``snodo.gateway.passing``), so an extension's folder can move or go whole."""
    assert _wing_breaches(_graph()) == []


def test_the_wing_check_sees_a_breach() -> None:
    """The wing check would pass vacuously if it missed an import into an extension."""
    graph = {
        "snodo.extensions": {"snodo.extensions.tasks"},
        "snodo.extensions.tasks": {"snodo.extensions.tasks.engine"},
        "snodo.extensions.tasks.engine": {"snodo.server.extensions"},
        "snodo.extensions.apps.server": {"snodo.extensions.tasks.engine"},
        "snodo.server.tools": {"snodo.extensions.tasks.engine"},
        "snodo.server.extensions": {"snodo.extensions"},
        "snodo.cli.run": {"snodo.extensions.tasks", "snodo.extensions.tasks.engine"},
    }
    assert _wing_breaches(graph) == [
        "snodo.cli.run -> snodo.extensions.tasks.engine",
        "snodo.extensions.apps.server -> snodo.extensions.tasks.engine",
        "snodo.server.extensions -> snodo.extensions",
        "snodo.server.tools -> snodo.extensions.tasks.engine",
    ]
    assert "snodo.extensions.tasks" in _graph()["snodo.extensions"]
