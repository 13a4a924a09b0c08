"""The API reference covers every public name: each object a reference page renders
(``::: name`` in docs/reference/) has a docstring, and so does every public name in it.

The walk follows what mkdocstrings renders with mkdocs.yml's options: a module's public
members (its ``__all__`` where it has one), a class's members not starting with ``_``,
and, for aliases, the object they point to. Instance attributes and dataclass fields are
described in their class's docstring, and a generated type alias by its definition, so
they are not required to carry their own.
mkdocstrings hides an object without a docstring instead of failing; this check is what
makes a missing one fail.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re

import griffe
import pytest

from tests.support.paths import ROOT

REFERENCE = ROOT / "docs" / "reference"
DIRECTIVE = re.compile(r"^::: ([\w.]+)$", re.MULTILINE)


def documented_roots() -> list[str]:
    """Every ``::: name`` of the reference pages, in page order."""
    names = []
    for page in sorted(REFERENCE.glob("*.md")):
        names += DIRECTIVE.findall(page.read_text(encoding="utf-8"))
    return names


def _loader() -> griffe.GriffeLoader:
    return griffe.GriffeLoader(search_paths=[str(ROOT), str(ROOT / "generated")])


@functools.cache
def loaded(top: str) -> griffe.Module:
    """The package ``top`` as the reference reads it, beside what the runtime re-exports
    (aliases resolved): loaded once per package for every name under it, since reading
    a package is most of a check's time."""
    loader = _loader()
    package = loader.load(top)
    for other in ("snodo", "snodo_wire"):  # what the runtime re-exports points there
        loader.load(other)
    loader.resolve_aliases(external=False)
    assert isinstance(package, griffe.Module)
    return package


def is_type_alias(obj: griffe.Object) -> bool:
    """A generated union or map alias (``X = TypeAliasType("X", A | B)``): the page
    shows its definition, the members it names, which is what documents it."""
    return obj.kind is griffe.Kind.ATTRIBUTE and str(obj.value).startswith("TypeAliasType(")


def _ours(obj: griffe.Object | griffe.Alias) -> bool:
    """Whether ``obj`` resolves within the loaded packages (not an alias to pydantic's)."""
    if not isinstance(obj, griffe.Alias):
        return True
    try:
        return obj.final_target is not None
    except griffe.AliasResolutionError:
        return False


def undocumented(obj: griffe.Object | griffe.Alias, seen: set[str]) -> list[str]:
    """Paths under ``obj`` that the reference would show if they had a docstring."""
    if not _ours(obj):
        return []  # another package's object (pydantic's MISSING): documented there
    target = obj.final_target if isinstance(obj, griffe.Alias) else obj
    if target.path in seen:
        return []
    seen.add(target.path)
    described = bool(target.docstring and target.docstring.value.strip())
    missing = [] if described or is_type_alias(target) else [obj.path]
    if target.kind is griffe.Kind.MODULE:
        members = [
            m for m in target.members.values() if _ours(m) and m.is_public and not m.is_module
        ]
    elif target.kind is griffe.Kind.CLASS:
        members = [
            m
            for name, m in target.members.items()
            if not name.startswith("_") and m.kind is not griffe.Kind.ATTRIBUTE
        ]
    else:
        members = []
    for member in members:
        missing += undocumented(member, seen)
    return missing


def test_the_reference_pages_name_the_public_modules() -> None:
    roots = documented_roots()
    for needed in ("snodo", "snodo.client", "snodo.core.state", "snodo_wire"):
        assert needed in roots


@pytest.mark.parametrize("name", documented_roots())
def test_every_documented_name_has_a_docstring(name: str) -> None:
    package = loaded(name.split(".", maxsplit=1)[0])
    obj = package if "." not in name else package[name.split(".", 1)[1]]
    assert undocumented(obj, set()) == []


def test_the_walk_sees_a_missing_docstring() -> None:
    module = griffe.visit(
        "sample",
        filepath=ROOT / "sample.py",
        code='"""A module."""\n__all__ = ["f", "C"]\ndef f(): ...\n'
        'class C:\n    """A class."""\n    def m(self): ...\n    def _p(self): ...\n'
        'A = TypeAliasType("A", int | str)\nB = 1\n__all__ += ["A", "B"]\n',
    )
    assert undocumented(module, set()) == ["sample.f", "sample.C.m", "sample.B"]


def _module_exists(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_snodo_module_the_guides_import_is_in_the_reference() -> None:
    """What a guide's program imports (``from snodo.x import y``, ``from snodo import
    elicitation``) a reader can look up."""
    programs = [*(ROOT / "docs" / "examples").glob("*.py"), *(ROOT / "examples").glob("*.py")]
    imported: set[str] = set()
    for path in programs:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if node.module.split(".")[0] != "snodo":
                continue
            imported.add(node.module)
            for alias in node.names:
                if _module_exists(f"{node.module}.{alias.name}"):
                    imported.add(f"{node.module}.{alias.name}")
                else:  # a module a package re-exports (``snodo.elicitation``)
                    value = getattr(importlib.import_module(node.module), alias.name, None)
                    if inspect.ismodule(value):
                        imported.add(value.__name__)
    assert "snodo.asking.elicitation" in imported  # the walk sees `from snodo import elicitation`
    assert sorted(imported - set(documented_roots())) == []
