"""A runtime run from a checkout reads the wire packages generated beside it.

In a checkout, ``generated/`` beside ``snodo/`` holds the packages this runtime's catalog
names, generated with it. They are imported from there, when first imported, ahead of
anything else the import system would find (a finder first on ``sys.meta_path``): an
editable install made before ``add-revision`` added a revision maps only the packages
it was made with (it needs no reinstall to serve the new one), and a process whose
path puts another checkout's packages first (a child started with a bare environment)
still pairs this runtime with its own. Installed from a wheel, the packages sit beside
``snodo`` and there is no ``generated/``: nothing here applies.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

__all__ = ["CHECKOUT_PACKAGES", "load_checkout_packages"]

CHECKOUT_PACKAGES: Final = Path(__file__).resolve().parents[2] / "generated"
"""Where a checkout keeps the wire packages, beside ``snodo/``."""


class _CheckoutPackages(importlib.abc.MetaPathFinder):
    """Finds the named packages in a checkout's folder, ahead of every other finder;
    their modules come from there too (the package's path is the folder's)."""

    def __init__(self, packages: dict[str, Path]) -> None:
        self.packages = packages

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        init = self.packages.get(fullname)
        if init is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=[str(init.parent)]
        )


def load_checkout_packages(names: Iterable[str], folder: Path = CHECKOUT_PACKAGES) -> list[str]:
    """Make each package of ``names`` that ``folder`` holds, and that is not imported
    yet, import from there when it is first imported (a revision no server serves may
    never be); the names found so."""
    if not folder.is_dir():
        return []
    packages = {
        package: folder / package / "__init__.py"
        for package in names
        if package not in sys.modules and (folder / package / "__init__.py").is_file()
    }
    if packages:
        sys.meta_path.insert(0, _CheckoutPackages(packages))
    return list(packages)
