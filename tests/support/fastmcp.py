"""Where FastMCP 4.2.3 is installed for tests and benchmarks.

It lives in its own venv, made by ``scripts/_env.sh`` from
``interop/fastmcp/requirements.txt``, so that its many dependencies stay out of the project's
own. Tests run its client, server and proxy as separate processes with this interpreter.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import ROOT

FASTMCP_PYTHON = ROOT / ".venv-fastmcp" / "bin" / "python"


def fastmcp_python() -> Path:
    """The interpreter with ``fastmcp==4.2.3``; fails loudly when the set-up step was skipped."""
    if not FASTMCP_PYTHON.exists():
        raise RuntimeError(
            f"{FASTMCP_PYTHON} is missing: run `bash -c 'source scripts/_env.sh'` first"
        )
    return FASTMCP_PYTHON
