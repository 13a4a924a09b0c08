"""Every name a guide imports comes from ``snodo`` or one documented subpackage.

The guides are the programs the site and the README show (``docs/examples/``,
``examples/``) and the imports the pages spell out in their prose. Each ``from snodo...
import`` names a public module below and only names that module lists in ``__all__`` (or
one of its own modules), so a program never reaches into a module that may move. The
public modules re-export from their own package once, in ``__init__``; no module of
snodo exists only to re-export another.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re

from tests.support.paths import ROOT

PUBLIC = frozenset(
    {
        "snodo",
        "snodo.asking",
        "snodo.auth",
        "snodo.client",
        "snodo.client.transports",
        "snodo.extensions",
        "snodo.extensions.apps",
        "snodo.extensions.skills",
        "snodo.extensions.tasks",
        "snodo.gateway",
        "snodo.middleware",
        "snodo.oauth",
        "snodo.otel",
        "snodo.search",
        "snodo.server",
        "snodo.stores",
        "snodo.transports",
    }
)
"""The modules a program imports snodo's names from, each documented in the Reference."""

PROGRAMS = sorted([*(ROOT / "docs" / "examples").glob("*.py"), *(ROOT / "examples").glob("*.py")])
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
PROSE_IMPORT = re.compile(r"`(from snodo[\w.]* import [\w, ]+)`")
"""An import a page spells out inline, such as `from snodo.server import RedisBus`."""

SHIM_DOORWAY = "snodo/revisions/"
"""The one place allowed modules that only re-export: the revision registry's doorway to
the generated wire packages, which no other runtime module imports by name
(tests/core/test_revisions.py)."""


def _snodo_imports(source: str, where: str) -> list[tuple[str, str, str]]:
    """``(where, module, name)`` for each name imported from a snodo module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            if node.module == "snodo" or node.module.startswith("snodo."):
                found += [(where, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("snodo."):
                    found.append((where, alias.name, ""))
    return found


def guide_imports() -> list[tuple[str, str, str]]:
    imports = []
    for program in PROGRAMS:
        imports += _snodo_imports(program.read_text(), program.relative_to(ROOT).as_posix())
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for line in PROSE_IMPORT.findall(text.replace("\n  ", " ")):
            imports += _snodo_imports(line, page.relative_to(ROOT).as_posix())
    return imports


def _is_public(module: str, name: str) -> bool:
    if module not in PUBLIC:
        return False
    if not name:
        return True
    exported = getattr(importlib.import_module(module), "__all__", ())
    if name in exported:
        return True
    # One of the public package's own modules, imported whole (``from snodo import roots``).
    return importlib.util.find_spec(f"{module}.{name}") is not None


def test_the_guides_import_only_public_names() -> None:
    imports = guide_imports()
    assert len({where for where, _, _ in imports}) > 20, "no guides found: is the path right?"
    private = [
        f"{where}: from {module} import {name}"
        for where, module, name in imports
        if not _is_public(module, name)
    ]
    assert private == []


def test_the_prose_imports_are_read() -> None:
    """The inline imports of the pages are seen, so the check above covers them too."""
    seen = {(where, module, name) for where, module, name in guide_imports()}
    assert ("docs/tasks.md", "snodo.server", "RedisBus") in seen


def test_the_names_the_guides_name_are_public() -> None:
    """The stores, the bus, the asking types and the errors a program handles."""
    where = {
        "RedisBus": "snodo.server",
        "notification_bus": "snodo.server",
        "MemoryGuard": "snodo.stores",
        "SQLiteGuard": "snodo.stores",
        "RedisGuard": "snodo.stores",
        "RedisError": "snodo.stores",
        "Root": "snodo.asking",
        "Keyring": "snodo",
        "McpError": "snodo",
        "InvalidParams": "snodo",
        "InvalidState": "snodo",
        "ResourceNotFound": "snodo",
        "ToolError": "snodo",
        "InputRequired": "snodo",
        "RequestError": "snodo.client",
        "ClientError": "snodo.client",
        "InputHandler": "snodo.client",
        "HttpApp": "snodo.transports",
        "Unauthorized": "snodo.transports",
        "JwtVerifier": "snodo.auth",
        "IntrospectionVerifier": "snodo.auth",
        "InvalidToken": "snodo.auth",
    }
    for name, module in where.items():
        public = importlib.import_module(module)
        assert name in public.__all__, f"{name} is not in {module}.__all__"
        assert getattr(public, name) is not None


def test_no_module_only_re_exports_another() -> None:
    """A module whose body is imports (and ``__all__``) alone is a shim: the name belongs
    in its own module and its package's ``__init__``."""
    shims = []
    for path in sorted((ROOT / "snodo").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if path.name in ("__init__.py", "__main__.py") or relative.startswith(SHIM_DOORWAY):
            continue
        body = [
            node
            for node in ast.parse(path.read_text()).body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        ]
        imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]
        rest = [
            node
            for node in body
            if node not in imports
            and not (
                isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["__all__"]
            )
        ]
        if imports and not rest:
            shims.append(relative)
    assert shims == []
