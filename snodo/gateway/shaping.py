"""``Shape``: what a gateway takes of the server behind it, and how it offers it.

``proxy(connect, shape=Shape(...))``, ``mount(server, other, prefix=..., shape=...)``,
``snodo proxy --include/--exclude/--rename/--shape FILE`` and an ``mcpServers`` entry's
``"shape"`` object all take one:

* ``include`` and ``exclude``: the backend's tools and prompts by name, its resources and
  templates by URI, as shell patterns (``admin_*``); what is not included, or is
  excluded, is neither listed nor reached: it answers exactly as a missing one;
* ``rename``: a tool's or prompt's backend name to the name it is offered by;
* ``tools``: a tool offered under a new shape (``snodo.server.transforms.ToolShape``:
  name, description, hidden and renamed arguments), as ``server.transform`` offers a
  server's own.

The filters and names apply to the backend's names; a mount's prefix comes after them.
A hidden argument's value given as a function of the ``Context`` is computed for each
call at the gateway; from a file it is a fixed value.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from snodo.core.context import Context
from snodo.core.errors import InvalidParams, ResourceNotFound
from snodo.server.transforms import ToolShape

__all__ = ["Shape"]

_NAMED: Final = {"tools/list": "tools", "prompts/list": "prompts"}
_LOCATED: Final = {
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}
NOTHING_COMPLETED: Final = {"completion": {"values": [], "total": 0, "hasMore": False}}


@dataclass(frozen=True)
class Shape:
    """Filters, names and tool shapes for what a gateway takes of a backend."""

    include: frozenset[str] | None = None
    exclude: frozenset[str] = frozenset()
    rename: Mapping[str, str] = field(default_factory=dict)
    tools: Mapping[str, ToolShape] = field(default_factory=dict)

    def __post_init__(self) -> None:
        offered = [self.rename.get(name, name) for name in self.rename]
        offered += [s.name for s in self.tools.values() if s.name is not None]
        if len(set(offered)) != len(offered):
            raise ValueError("a shape offers two of the backend's items by one name")

    @classmethod
    def of(
        cls,
        *,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
        rename: Mapping[str, str] | None = None,
        tools: Mapping[str, ToolShape] | None = None,
    ) -> Shape:
        """A shape from any iterables and mappings."""
        return cls(
            None if include is None else frozenset(include),
            frozenset(exclude),
            dict(rename or {}),
            dict(tools or {}),
        )

    @classmethod
    def from_json(cls, value: Any) -> Shape:
        """A shape as a configuration writes it: ``{"include": [...], "exclude": [...],
        "rename": {...}, "tools": {"name": {"name", "title", "description", "hide",
        "rename"}}}``; ValueError naming what does not fit."""
        if not isinstance(value, Mapping):
            raise ValueError("a shape is an object")
        unknown = set(value) - {"include", "exclude", "rename", "tools"}
        if unknown:
            raise ValueError(f"a shape has no {', '.join(sorted(unknown))}")
        tools: dict[str, ToolShape] = {}
        for name, given in (value.get("tools") or {}).items():
            if not isinstance(given, Mapping) or set(given) - {
                "name",
                "title",
                "description",
                "hide",
                "rename",
            }:
                raise ValueError(f"the shape of tool {name!r} is not one")
            tools[str(name)] = ToolShape(
                given.get("name"),
                given.get("title"),
                given.get("description"),
                dict(given.get("hide") or {}),
                dict(given.get("rename") or {}),
            )
        include = value.get("include")
        return cls.of(
            include=None if include is None else [str(item) for item in include],
            exclude=[str(item) for item in value.get("exclude") or ()],
            rename={str(k): str(v) for k, v in (value.get("rename") or {}).items()},
            tools=tools,
        )

    # -- names ---------------------------------------------------------------------------

    def takes(self, name: str) -> bool:
        """Whether the backend's tool, prompt, resource or template ``name`` is served."""
        if self.include is not None and not any(fnmatch.fnmatchcase(name, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(name, pattern) for pattern in self.exclude)

    def offered(self, name: str) -> str:
        """The name the backend's tool or prompt ``name`` is offered by."""
        shape = self.tools.get(name)
        if shape is not None and shape.name is not None:
            return shape.name
        return self.rename.get(name, name)

    def backend_name(self, offered: str) -> str | None:
        """The backend's name of what is offered as ``offered``; None: nothing is."""
        for name, shape in self.tools.items():
            if shape.name == offered:
                return name if self.takes(name) else None
        for name, new in self.rename.items():
            if new == offered:
                return name if self.takes(name) else None
        if offered in self.rename or (offered in self.tools and self.tools[offered].name):
            return None  # offered under its new name only
        return offered if self.takes(offered) else None

    def names(self, kind: str, names: Iterable[str]) -> list[str]:
        """The backend's names of ``kind`` (``tools``, ``prompts``, ``resources``,
        ``resourceTemplates``) as they are served."""
        if kind in ("tools", "prompts"):
            return [self.offered(name) for name in names if self.takes(name)]
        return [name for name in names if self.takes(name)]

    # -- lists and requests --------------------------------------------------------------

    def listed(self, method: str, items: list[Any]) -> list[Any]:
        """A backend list's items as served."""
        if method in _NAMED:
            shown = []
            for item in items:
                name = item.get("name") if isinstance(item, Mapping) else None
                if not isinstance(name, str) or not self.takes(name):
                    continue
                shape = self.tools.get(name) if method == "tools/list" else None
                listed = shape.definition(item, name) if shape is not None else item
                shown.append({**listed, "name": self.offered(name)})
            return shown
        located = _LOCATED.get(method)
        if located is None:
            return items
        key = located[1]
        return [i for i in items if not isinstance(i, Mapping) or self.takes(str(i.get(key)))]

    def result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """A backend's answer to ``method`` as served (its list shaped)."""
        key = _NAMED.get(method) or (_LOCATED[method][0] if method in _LOCATED else None)
        if key is None or not isinstance(result.get(key), list):
            return result
        return {**result, key: self.listed(method, result[key])}

    async def request(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """The params to send the backend for the front's request; what is not served
        answers as missing (None: a completion of a template not served, which
        completes nothing)."""
        method = ctx.request_method
        sent = dict(params)
        if method in ("tools/call", "prompts/get"):
            offered = str(params.get("name"))
            name = self.backend_name(offered)
            if name is None:
                kind = "tool" if method == "tools/call" else "prompt"
                raise InvalidParams(f"Unknown {kind}: {offered}")
            sent["name"] = name
            shape = self.tools.get(name) if method == "tools/call" else None
            if shape is not None:
                sent["arguments"] = await shape.arguments(params.get("arguments") or {}, ctx)
        elif method == "resources/read":
            uri = str(params.get("uri"))
            if not self.takes(uri):
                raise ResourceNotFound(uri)
        elif method == "completion/complete":
            ref = dict(params.get("ref") or {})
            if ref.get("type") == "ref/prompt":
                name = self.backend_name(str(ref.get("name")))
                if name is None:
                    raise InvalidParams(f"Unknown prompt: {ref.get('name')}")
                sent["ref"] = {**ref, "name": name}
            elif not self.takes(str(ref.get("uri"))):
                return None
        return sent
