"""A runtime run from a checkout reads the wire packages generated beside it.

In a checkout, ``generated/`` beside ``snodo/`` holds the packages this runtime's catalog
names, generated with it. They are imported from there ahead of anything else the import
system would find: an editable install made before ``add-revision`` added a revision
maps only the packages it was made with (it needs no reinstall to serve the new one),
and a process whose path puts another checkout's packages first (a child started with a
bare environment) still pairs this runtime with its own. Installed from a wheel, the
packages sit beside ``snodo`` and there is no ``generated/``: nothing here applies.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Final

__all__ = ["CHECKOUT_PACKAGES", "load_checkout_packages"]

CHECKOUT_PACKAGES: Final = Path(__file__).resolve().parents[2] / "generated"
"""Where a checkout keeps the wire packages, beside ``snodo/``."""


def load_checkout_packages(names: Iterable[str], folder: Path = CHECKOUT_PACKAGES) -> list[str]:
    """Import each package of ``names`` that ``folder`` holds and is not imported yet
    from there; the names imported so."""
    loaded: list[str] = []
    if not folder.is_dir():
        return loaded
    for package in names:
        init = folder / package / "__init__.py"
        if package in sys.modules or not init.is_file():
            continue
        spec = importlib.util.spec_from_file_location(
            package, init, submodule_search_locations=[str(init.parent)]
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[package]
            raise
        loaded.append(package)
    return loaded
