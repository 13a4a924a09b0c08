"""setuptools' build backend, asking for mypyc only when the compiled build is wanted.

``SNODO_COMPILE=1`` (see ``setup.py``) needs mypy, whose mypyc does the compiling, and
pydantic and msgspec, whose types the compiled modules' type check reads; a pure-Python
build needs none of them, so none is in ``[build-system] requires``. Only building a
wheel compiles: metadata, source distributions and editable installs are built as pure
Python (extension modules beside the sources would shadow every edit).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from setuptools import build_meta
from setuptools.build_meta import build_wheel

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

COMPILER = ["mypy==2.4.1", "pydantic>=2.14,<3", "msgspec>=0.19,<1"]
"""mypyc, and the packages whose types the compiled modules' type check reads: pydantic's
models, and msgspec's ``Struct`` options, which the check refuses as unknown keywords when
msgspec is not there to say what they are (``snodo.client.transports.passthrough``)."""
P = ParamSpec("P")
R = TypeVar("R")


def _pure(hook: Callable[P, R]) -> Callable[P, R]:
    """setuptools' ``hook``, run without SNODO_COMPILE (setup.py reads it)."""

    @functools.wraps(hook)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        saved = os.environ.pop("SNODO_COMPILE", None)
        try:
            return hook(*args, **kwargs)
        finally:
            if saved is not None:
                os.environ["SNODO_COMPILE"] = saved

    return run


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    if os.environ.get("SNODO_COMPILE") == "1":
        # Not setuptools' own answer: finding it runs setup.py, which would import mypyc
        # before it is installed (and setup.py asks for nothing more).
        return list(COMPILER)
    required: list[str] = build_meta.get_requires_for_build_wheel(config_settings)
    return required


# The same metadata either way, so a compiled build compiles once, in build_wheel.
prepare_metadata_for_build_wheel = _pure(build_meta.prepare_metadata_for_build_wheel)
get_requires_for_build_sdist = _pure(build_meta.get_requires_for_build_sdist)
build_sdist = _pure(build_meta.build_sdist)
get_requires_for_build_editable = _pure(build_meta.get_requires_for_build_editable)
prepare_metadata_for_build_editable = _pure(build_meta.prepare_metadata_for_build_editable)
build_editable = _pure(build_meta.build_editable)
