"""Where the official Python SDK's legacy-only release (mcp 1.30.0) is installed for tests.

It lives in its own venv, made by ``scripts/_env.sh`` from
``interop/python_sdk_legacy/requirements.txt``, because it cannot share one with mcp 2.x.
Tests run it as a separate process with this interpreter.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import ROOT

LEGACY_SDK_PYTHON = ROOT / ".venv-mcp1" / "bin" / "python"


def legacy_sdk_python() -> Path:
    """The interpreter with ``mcp==1.30.0``; fails loudly when the set-up step was skipped."""
    if not LEGACY_SDK_PYTHON.exists():
        raise RuntimeError(
            f"{LEGACY_SDK_PYTHON} is missing: run `bash -c 'source scripts/_env.sh'` first"
        )
    return LEGACY_SDK_PYTHON
