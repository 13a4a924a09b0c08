"""setuptools' build backend, asking for mypyc only when the compiled build is wanted.

``SNODO_COMPILE=1`` (see ``setup.py``) needs mypy, whose mypyc does the compiling, and
pydantic, whose types the compiled modules use; a pure-Python build needs neither, so
neither is in ``[build-system] requires``. Only building
a wheel compiles: metadata, source distributions and editable installs are built as
pure Python (extension modules beside the sources would shadow every edit).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

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

COMPILER = ["mypy==2.4.1", "pydantic>=2.14,<3"]
Settings = dict[str, Any] | None


@contextlib.contextmanager
def _pure() -> Iterator[None]:
    """Without SNODO_COMPILE for the length of one hook (setup.py reads it)."""
    saved = os.environ.pop("SNODO_COMPILE", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["SNODO_COMPILE"] = saved


def get_requires_for_build_wheel(config_settings: Settings = None) -> list[str]:
    if os.environ.get("SNODO_COMPILE") == "1":
        # Not setuptools' own answer: finding it runs setup.py, which would import mypyc
        # before it is installed (and setup.py asks for nothing more).
        return list(COMPILER)
    required: list[str] = build_meta.get_requires_for_build_wheel(config_settings)
    return required


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Settings = None
) -> str:
    with _pure():  # the same metadata, without compiling twice
        name: str = build_meta.prepare_metadata_for_build_wheel(metadata_directory, config_settings)
    return name


def get_requires_for_build_sdist(config_settings: Settings = None) -> list[str]:
    with _pure():
        required: list[str] = build_meta.get_requires_for_build_sdist(config_settings)
    return required


def build_sdist(sdist_directory: str, config_settings: Settings = None) -> str:
    with _pure():
        name: str = build_meta.build_sdist(sdist_directory, config_settings)
    return name


def get_requires_for_build_editable(config_settings: Settings = None) -> list[str]:
    with _pure():
        required: list[str] = build_meta.get_requires_for_build_editable(config_settings)
    return required


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: Settings = None
) -> str:
    with _pure():
        name: str = build_meta.prepare_metadata_for_build_editable(
            metadata_directory, config_settings
        )
    return name


def build_editable(
    wheel_directory: str, config_settings: Settings = None, metadata_directory: str | None = None
) -> str:
    with _pure():
        name: str = build_meta.build_editable(wheel_directory, config_settings, metadata_directory)
    return name
