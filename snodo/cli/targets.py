"""What a target names: ``package.module:name`` or ``path/to/file.py:name`` imported,
its attribute returned (without ``:name``, the module's only ``Server``), the way
uvicorn finds ``module:app``: the current directory searched first. ``snodo run``,
``snodo proxy --authorization`` and the workers load through it; what is missing, or
cannot be registered, is one ``snodo:`` line."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from snodo.server import Server
from snodo.server.invoke import DefinitionError
from snodo.server.tools import ToolDefinitionError

__all__ = ["check_exists", "load", "search_cwd"]


def load(target: str) -> Any:
    """Import ``module:name`` or ``file.py:name`` and return the object it names.

    The current directory goes on ``sys.path`` first, as uvicorn does, so a module
    beside the caller imports by name. A missing file or module, or a tool (a handler, a
    lifespan) that cannot be registered, ends the program with one ``snodo:`` line
    instead of a traceback.
    """
    location, colon, name = target.rpartition(":")
    if not colon:  # `app.py` or `package.app`: the module's only Server
        location = target
    elif not location or not name:
        raise SystemExit(
            f"snodo: target must look like module:name or file.py:name, got {target!r}"
        )
    search_cwd()
    try:
        module = _import(location)
    except (ToolDefinitionError, DefinitionError) as exc:
        raise SystemExit(f"snodo: {location}: {exc}") from None
    if not colon:
        return _only_server(module, location)
    try:
        found = getattr(module, name)
    except AttributeError:
        raise SystemExit(f"snodo: {location} has no attribute {name!r}") from None
    return found


def _only_server(module: ModuleType, location: str) -> Server:
    """The one ``Server`` a module holds at its top level; one line when it holds none
    or several (then ``:name`` says which)."""
    found = {name: value for name, value in vars(module).items() if isinstance(value, Server)}
    servers = list({id(server): server for server in found.values()}.values())
    if len(servers) == 1:
        return servers[0]
    if not servers:
        raise SystemExit(f"snodo: {location} holds no Server; name one with {location}:name")
    names = ", ".join(sorted(found))
    raise SystemExit(
        f"snodo: {location} holds several Servers ({names}); name one: {location}:NAME"
    )


def search_cwd() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)


def check_exists(target: str) -> None:
    """Fail with one line if the target's file or module is missing, without running it:
    with ``--workers`` each worker imports the target itself, too late to say so once."""
    location = target.rpartition(":")[0] or target
    if location.endswith(".py") or os.sep in location:
        if not Path(location).is_file():
            raise SystemExit(f"snodo: no such file: {location}")
        return
    search_cwd()
    try:
        found = importlib.util.find_spec(location)
    except ModuleNotFoundError as exc:
        missing = exc.name or location
    else:
        if found is not None:
            return
        missing = location
    raise SystemExit(
        f"snodo: no module named {missing!r} (looked in the current directory and sys.path)"
    )


def _import(location: str) -> ModuleType:
    if location.endswith(".py") or os.sep in location:
        path = Path(location).resolve()
        if not path.is_file():
            raise SystemExit(f"snodo: no such file: {location}")
        module_name = f"snodo_target_{path.stem}"  # never shadows a real module
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"snodo: cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as exc:
        # Only the target itself (or its package) missing is the user's typo; a module
        # the target imports that is missing keeps its traceback.
        if exc.name is None or not (location == exc.name or location.startswith(f"{exc.name}.")):
            raise
        raise SystemExit(
            f"snodo: no module named {exc.name!r} (looked in the current directory and sys.path)"
        ) from None
