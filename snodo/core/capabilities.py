"""Client capabilities: what an input request needs, and whether a request declared it.

Theory of operation. In the current revision a client declares its capabilities on every request
(``_meta[META_CLIENT_CAPABILITIES]``) and a server must not infer
them from earlier requests. A capability is a path into that object
(``("sampling", "tools")``); it is declared when every step of the path is an object.
Which paths an input request needs comes from the generated ``CAPABILITY_RULES`` table
(from each revision's ``schema/<revision>/overlay.toml``), so the rules are data, not
branches here.

When an InputRequiredResult asks for something undeclared, the whole result is
refused with -32021 whose ``requiredCapabilities`` is one ClientCapabilities object:
the deep union (``merge``) of every missing path, each ending in ``{}``. The union is
idempotent and ignores order, so the same set of needs always yields the same object.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from snodo.core.input_requests import BuiltRequest
from snodo.revisions.authoring.tables import CAPABILITY_RULES, CapabilityRule

__all__ = ["declares", "merge", "missing", "needs", "path_object"]

Path = tuple[str, ...]


def _is_object(node: Any) -> bool:
    # The two types declared capabilities come as, before the slower ABC check.
    return type(node) is dict or type(node) is MappingProxyType or isinstance(node, Mapping)


def declares(declared: Mapping[str, Any], path: Path, empty_parent_satisfies: bool = False) -> bool:
    node: Any = declared
    for depth, step in enumerate(path):
        if not _is_object(node):
            return False
        if step not in node:
            last = depth == len(path) - 1
            # client/elicitation.mdx: `elicitation: {}` declares form mode alone.
            return last and empty_parent_satisfies and depth > 0 and not node
        node = node[step]
    return _is_object(node)


def _applies(rule: CapabilityRule, params: Mapping[str, Any]) -> bool:
    if rule.always:
        return True
    if rule.present:
        return any(params.get(name) is not None for name in rule.present)
    assert rule.param is not None
    if rule.param not in params:
        return rule.absent_matches
    value = params[rule.param]
    if rule.values:
        return value in rule.values
    return value not in rule.not_values


def needs(
    request: Mapping[str, Any], rules: tuple[Any, ...] = CAPABILITY_RULES
) -> list[CapabilityRule]:
    """The capability rules (``rules``: a revision's table) that apply to one bare
    input request."""
    method = request.get("method")
    params = request.get("params")
    params = params if isinstance(params, Mapping) else {}
    return [r for r in rules if r.method == method and _applies(r, params)]


def path_object(path: Path) -> dict[str, Any]:
    """``("sampling", "tools")`` -> ``{"sampling": {"tools": {}}}``."""
    node: dict[str, Any] = {}
    for step in reversed(path):
        node = {step: node}
    return node


def merge(*objects: Mapping[str, Any]) -> dict[str, Any]:
    """Deep union of capability objects."""
    out: dict[str, Any] = {}
    for obj in objects:
        for key, value in obj.items():
            if isinstance(value, Mapping) and isinstance(out.get(key), dict):
                out[key] = merge(out[key], value)
            elif isinstance(value, Mapping):
                out[key] = merge(value)
            else:
                out.setdefault(key, value)
    return dict(sorted(out.items()))


def _needed(request: Mapping[str, Any], rules: tuple[Any, ...]) -> Iterable[CapabilityRule]:
    """``needs(request)``, worked out once for a built request, which cannot change
    (by the authoring revision's rules; another revision's are applied afresh)."""
    if rules is not CAPABILITY_RULES:
        return needs(request, rules)
    if not isinstance(request, BuiltRequest):
        return needs(request)
    if request.needs is None:
        request.needs = tuple(needs(request))
    found: tuple[CapabilityRule, ...] = request.needs
    return found


def missing(
    requests: Iterable[Mapping[str, Any]],
    declared: Mapping[str, Any],
    rules: tuple[Any, ...] = CAPABILITY_RULES,
) -> dict[str, Any]:
    """Every capability the requests need and ``declared`` lacks, as one object, by
    ``rules`` (a revision's table; the authoring revision's by default)."""
    lacking: list[dict[str, Any]] = []
    for request in requests:
        for rule in _needed(request, rules):
            if not declares(declared, rule.requires, rule.empty_parent_satisfies):
                lacking.append(path_object(rule.requires))
    return merge(*lacking) if lacking else {}
