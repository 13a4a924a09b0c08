"""The revision registry: each pinned MCP revision's generated package, by protocol version.

A new revision is data: a row in ``catalog`` (rendered by the generator) and the package
it names. The server and the client look up the negotiated version here once and check
and build that request's messages with its package, so revisions are served side by side
and none judges another's traffic. ``build`` makes a registry from any catalog (tests
make one with a throwaway revision); ``REVISIONS`` is the one from ``catalog``.

A revision no server serves by default (a draft) is imported on first use, not with
snodo (``python -X importtime -c "import snodo"``: 0.92 s against 1.06 s with the draft
imported too, the median of seven runs on a shared two-core machine).

This package is the only place in snodo that imports a wire package by name
(tests/core/test_revisions.py): the rows' packages with ``importlib``, and, for typing and
authoring, the newest modern revision (``authoring``) and the extensions (``tasks``,
``apps``) statically. It may import no other snodo package; every package may import it.
"""

from __future__ import annotations

import functools
import importlib
import types
import typing
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any, Final, TypeAlias

from pydantic import BaseModel

from snodo.revisions.catalog import CATALOG, EXTENSIONS
from snodo.revisions.checkout import load_checkout_packages

# Before any wire package is imported: a checkout's own (snodo.revisions.checkout).
load_checkout_packages([row[1] for row in CATALOG] + [package for _, package in EXTENSIONS])

from snodo.revisions.authoring.protocol import REVISION as AUTHORING  # noqa: E402

__all__ = [
    "AUTHORING",
    "CARRIED",
    "REVISIONS",
    "Revision",
    "Revisions",
    "Shape",
    "build",
    "shaped",
]

Row: TypeAlias = tuple[str, str, str, bool, tuple[str, ...]]
Shape: TypeAlias = Mapping[str, "Shape | None"]
"""The wire names a model defines, each with the shape of its nested model (None: any
value)."""

CARRIED: Final = frozenset({"extensions"})
"""Capability keys kept in every revision's answers, defined there or not: extensions are
negotiated by identifier in either era (an MCP Apps host on a legacy session declares and
reads them too)."""


def _shape(model: type[BaseModel]) -> dict[str, Shape | None]:
    shape: dict[str, Shape | None] = {}
    for name, field in model.model_fields.items():
        annotation = field.annotation
        options = (
            typing.get_args(annotation)
            if typing.get_origin(annotation) in (typing.Union, types.UnionType)
            else (annotation,)
        )
        nested = [o for o in options if isinstance(o, type) and issubclass(o, BaseModel)]
        shape[field.alias or name] = _shape(nested[0]) if len(nested) == 1 else None
    return shape


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, through ``list[...]``, unions and ``Annotated``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def shaped(
    value: Mapping[str, Any], shape: Shape, carried: frozenset[str] = CARRIED
) -> dict[str, Any]:
    """``value`` with only the keys ``shape`` defines (and ``carried``), nested objects
    likewise: what a revision's answer may say of it."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in shape:
            inner = shape[key]
            out[key] = (
                shaped(item, inner, frozenset())
                if inner is not None and isinstance(item, Mapping)
                else item
            )
        elif key in carried:
            out[key] = item
    return out


class Revision:
    """One pinned core revision: its package's modules and the tables read from them."""

    def __init__(
        self, version: str, package: str, era: str, served: bool, versions: tuple[str, ...]
    ) -> None:
        if era not in ("modern", "legacy"):
            raise ValueError(f"revision {version}: era is modern or legacy, not {era!r}")
        self.version = version
        self.package = package
        self.era = era
        self.served = served
        self.versions = versions
        """The protocol versions this package speaks, newest first."""
        self.authoring = version == AUTHORING
        """Whether this is the revision of the typed models handlers and clients use."""
        self._loaded = False
        if served or self.authoring:
            self._load()

    def __getattr__(self, name: str) -> Any:
        """The package's facts, read on first use: a revision no server serves by
        default (a draft) is not imported with snodo, only when a server serves it, a
        client speaks it or one of its messages is checked."""
        if name.startswith("__") or self.__dict__.get("_loaded", True):
            raise AttributeError(name)
        self._load()
        return getattr(self, name)

    def _load(self) -> None:
        """Import the package, and read its tables."""
        self._loaded = True
        package = self.package
        self.models: Any = wire_module(package, "models")
        self.adapters: Any = wire_module(package, "adapters")
        self.tables: Any = wire_module(package, "tables")
        self.protocol: Any = wire_module(package, "protocol")
        self.errors: Any = wire_module(package, "errors")
        self.methods: Mapping[str, Any] = self.tables.METHODS
        """Client-to-server requests: method name to its ``MethodSpec``."""
        self.input_required_methods: frozenset[str] = frozenset(
            getattr(self.tables, "INPUT_REQUIRED_METHODS", ())
        )
        self.capability_rules: tuple[Any, ...] = tuple(getattr(self.tables, "CAPABILITY_RULES", ()))
        self.server_requests: Mapping[str, Any] = getattr(self.tables, "SERVER_REQUESTS", {})
        self.batch_versions: frozenset[str] = frozenset(
            getattr(self.protocol, "BATCH_VERSIONS", ())
        )
        named = (
            *self.methods,
            *self.server_requests,
            *getattr(self.tables, "INPUT_REQUESTS", ()),
            *getattr(self.tables, "SERVER_NOTIFICATIONS", ()),
            *getattr(self.tables, "CLIENT_NOTIFICATIONS", ()),
        )
        self.namespaces: frozenset[str] = frozenset(n.split("/")[0] for n in named if "/" in n)
        """The namespaces of every method and notification it defines (``tools``,
        ``notifications``, ...): an extension's methods have namespaces of their own."""
        self._items: dict[tuple[str, str], frozenset[str] | None] = {}
        self.capability_shape: Shape = _shape(self.models.ServerCapabilities)
        self.info_shape: Shape = _shape(self.models.Implementation)
        asks = getattr(self.protocol, "INPUT_REQUIRED_RESULT", None)
        self.input_required_result: type[BaseModel] | None = (
            None if asks is None else getattr(self.models, asks)
        )
        """The result that asks the client for input, by the name the overlay gives it
        (None: the revision has none, as an initialize-based one)."""
        self.meta_keys: Mapping[str, str] = {
            name[len("META_") :].lower(): value
            for name, value in vars(self.protocol).items()
            if name.startswith("META_") and isinstance(value, str)
        }
        """The reserved ``_meta`` keys the overlay names (``log_level``, ``server_info``,
        ...), by name; a key the revision removed is not there."""
        self.log_level_key: str | None = self.meta_keys.get("log_level")
        """Where a request asks for log messages; None: the revision has no logging."""
        self.client_info_key: str | None = self.meta_keys.get("client_info")
        self.server_info_key: str | None = self.meta_keys.get("server_info")
        self.server_notifications: frozenset[str] = frozenset(
            getattr(self.tables, "SERVER_NOTIFICATIONS", ())
        )
        """The notifications a server may send its clients: no other reaches them."""

    def __repr__(self) -> str:
        return f"Revision({self.version!r}, {self.package!r}, {self.era!r})"

    def item_fields(self, method: str, key: str) -> frozenset[str] | None:
        """The wire names of the items ``method``'s result lists under ``key`` (a
        ``tools/list`` result's ``tools``: the fields of its ``Tool``); None when the
        revision has no such list."""
        if (method, key) in self._items:
            return self._items[(method, key)]
        spec = self.methods.get(method)
        fields = getattr(getattr(spec, "result", None), "model_fields", {})
        info = next((f for n, f in fields.items() if (f.alias or n) == key), None)
        item = None if info is None else _model_in(info.annotation)
        found = (
            None if item is None else frozenset(f.alias or n for n, f in item.model_fields.items())
        )
        self._items[(method, key)] = found
        return found

    def capabilities(self, offered: Mapping[str, Any]) -> dict[str, Any]:
        """Server capabilities as this revision defines them: flags it lacks left out."""
        return shaped(offered, self.capability_shape)

    def info(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """The server's ``Implementation`` with only the fields this revision defines."""
        return shaped(info, self.info_shape, frozenset())


class Revisions:
    """Revisions newest first, and the revision of each protocol version they speak."""

    def __init__(self, revisions: Iterable[Revision], extensions: Mapping[str, ModuleType]):
        self.all = tuple(revisions)
        self.by_version: dict[str, Revision] = {}
        for revision in self.all:
            for version in revision.versions:
                self.by_version.setdefault(version, revision)
        self.extensions = extensions
        """Each extension's package, by its pin revision (``ext-tasks``)."""
        self.extension_notifications: frozenset[str] = frozenset(
            method
            for package in extensions.values()
            for method in getattr(package.tables, "SERVER_NOTIFICATIONS", ())
        )
        """The notifications the extensions define (``notifications/tasks``): sent in any
        revision whose client negotiated the extension."""

    @functools.cached_property
    def namespaces(self) -> frozenset[str]:
        """The namespaces any of the revisions defines a method or notification in
        (every revision imported to say it, on first use)."""
        return frozenset().union(*(r.namespaces for r in self.all))

    def served(self, era: str) -> tuple[Revision, ...]:
        """The revisions of ``era`` a server offers unless narrowed, newest first."""
        return tuple(r for r in self.all if r.served and r.era == era)

    def versions(self, era: str) -> tuple[str, ...]:
        """Every protocol version the served revisions of ``era`` speak, newest first."""
        return tuple(v for r in self.served(era) for v in r.versions)

    def newest(self, era: str) -> Revision:
        """The newest served revision of ``era`` (the one authoring types come from,
        for the modern era)."""
        found = self.served(era)
        if not found:
            raise LookupError(f"no served {era} revision in the catalog")
        return found[0]

    def of(self, version: str) -> Revision:
        """The revision that speaks ``version``; KeyError for one none speaks."""
        return self.by_version[version]


def build(
    catalog: Iterable[Row] = CATALOG, extensions: Iterable[tuple[str, str]] = EXTENSIONS
) -> Revisions:
    """A registry from catalog rows ``(version, package, era, served, versions)``, newest
    first, and extension rows ``(pin, package)``: each package imported once, a served
    revision's now, another's on first use (``Revision``)."""
    return Revisions(
        (Revision(*row) for row in catalog),
        {pin: _extension(package) for pin, package in extensions},
    )


def _extension(package: str) -> ModuleType:
    """An extension's package, its ``models`` and ``tables`` imported with it."""
    for module in ("models", "tables"):
        wire_module(package, module)
    return importlib.import_module(package)


def wire_module(package: str, module: str) -> ModuleType:
    """``package.module`` of a wire package (the checkout's, where there is one:
    ``snodo.revisions.checkout``)."""
    return importlib.import_module(f"{package}.{module}")


REVISIONS: Final = build()
"""The registry of the catalog: what ``snodo run`` serves."""
