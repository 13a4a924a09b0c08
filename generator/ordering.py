"""The generated models in dependency order, so that a package's import builds nothing.

datamodel-codegen writes a model before the models its fields name often enough (25 of
the 2026-07-28 package's): it quotes those names and ends the module with
``Model.model_rebuild()``, which resolves them and, in doing so, builds the model's
validator and those of every model it holds, in every process that imports the package.
Written after what they name, the models need no quotes and no rebuild: each field is
resolved when its class is made and nothing is built until first use (``defer_build``).

Only a real cycle keeps its quotes (the schema's ``JSONValue`` and ``JSONObject`` are
type aliases, resolved lazily); a model still naming a later one keeps its rebuild. The
statements are moved whole, with the comments and blank lines before each.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["dependency_order"]


@dataclass
class _Statement:
    text: str
    """Its source, with the comments and blank lines before it."""
    defines: str | None
    """The name a class or an assignment defines, if any."""
    is_class: bool
    needs: set[str]
    """The names it refers to, bare or quoted in a type."""
    rebuilds: str | None
    """The class of a ``Name.model_rebuild()`` statement."""


def _type_strings(node: ast.AST) -> Iterator[ast.Constant]:
    """The quoted names in a type: not a ``Literal``'s values, nor a call's arguments
    (``Field(alias=...)``, ``TypeAliasType("Name", ...)``'s name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
        return
    if isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "Literal":
        return
    if isinstance(node, ast.Call):
        for arg in node.args[1:] if getattr(node.func, "id", None) == "TypeAliasType" else []:
            yield from _type_strings(arg)
        return
    for child in ast.iter_child_nodes(node):
        yield from _type_strings(child)


def _names(node: ast.AST) -> set[str]:
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return found | {str(c.value) for c in _type_strings(node)}


def _rebuilt(node: ast.stmt) -> str | None:
    """``X`` of a statement ``X.model_rebuild()``."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    if isinstance(func, ast.Attribute) and func.attr == "model_rebuild":
        return getattr(func.value, "id", None)
    return None


def _defined(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ClassDef):
        return node.name
    target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
    return target.id if isinstance(target, ast.Name) else None


def _split(source: str) -> tuple[str, list[_Statement]]:
    """The module's top-level statements, each with the lines before it back to the one
    before; and what follows the last."""
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    statements, start = [], 0
    for node in tree.body:
        end = node.end_lineno or node.lineno
        name = _defined(node)
        is_class = isinstance(node, ast.ClassDef)
        needs = _names(node) - {name}
        statements.append(
            _Statement("".join(lines[start:end]), name, is_class, needs, _rebuilt(node))
        )
        start = end
    return "".join(lines[start:]), statements


def _unquoted(text: str, known: set[str]) -> str:
    """``text`` (one class) with each quoted name of ``known`` in its fields' types bare."""
    tree = ast.parse(text)
    spots = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign):
            spots += [c for c in _type_strings(node.annotation) if c.value in known]
    lines = text.splitlines(keepends=True)
    # From the last, so that the offsets before each are still right; bytes, as they are.
    for constant in sorted(spots, key=lambda c: (c.lineno, c.col_offset), reverse=True):
        if constant.end_lineno != constant.lineno or constant.end_col_offset is None:
            continue  # a name split over lines stays quoted
        line = lines[constant.lineno - 1].encode()
        bare = str(constant.value).encode()
        line = line[: constant.col_offset] + bare + line[constant.end_col_offset :]
        lines[constant.lineno - 1] = line.decode()
    return "".join(lines)


def _cycles(statements: list[_Statement], defined: set[str]) -> dict[str | None, set[str]]:
    """For each defined name, the names in a cycle with it (each reaches the other)."""
    needs = {s.defines: s.needs & defined for s in statements if s.defines}
    reach: dict[str | None, set[str]] = {}
    for name in needs:
        seen: set[str] = set()
        stack = [name]
        while stack:
            for other in needs.get(stack.pop(), set()) - seen:
                seen.add(other)
                stack.append(other)
        reach[name] = seen
    return {name: {o for o in reach[name] if name in reach[o]} for name in needs}


def dependency_order(source: str) -> str:
    """``source`` (a generated models module) with every statement after the ones it
    names, in the order it had otherwise; quotes and rebuilds dropped where no longer
    needed (the rebuilds kept stay at the end, after every class)."""
    tail, statements = _split(source)
    pending = [s for s in statements if s.rebuilds is None]
    defined = {s.defines for s in pending if s.defines}
    peers = _cycles(pending, defined)
    done: set[str] = set()
    ordered: list[_Statement] = []
    forward: set[str] = set()  # classes still naming a later one (a cycle): rebuilt
    while pending:
        # The first statement whose names are all made, but those in a cycle with it.
        ready = next(
            (s for s in pending if (s.needs & defined) - peers.get(s.defines, set()) <= done),
            pending[0],
        )
        pending.remove(ready)
        if ready.is_class:
            ready.text = _unquoted(ready.text, done)
            if (ready.needs & defined) - done:
                forward.add(str(ready.defines))
        ordered.append(ready)
        if ready.defines:
            done.add(ready.defines)
    rebuilds = [s for s in statements if s.rebuilds in forward]
    return "".join(s.text for s in ordered + rebuilds) + tail
