"""The compiled build the way the README says to make it, from a bare venv:
``SNODO_COMPILE=1 pip install '.[http]'`` in a checkout, with the venv's own pip and
nothing else installed. The build's environment has only what the in-tree backend asks
for (mypy, and the packages whose types the compiled modules' check reads): a package
missing there failed the build (msgspec's ``Struct`` options, read as unknown keywords).

When ``./scripts/test`` ran ``scripts/release`` just before (``SNODO_RELEASE_DIR``), the
release's compiled wheel was built that very way (a bare venv's own pip, from a copy of
the checkout's files) and this installs it rather than building it again: the build is
minutes of one core compiling. Else it builds here.

Slow where it builds (several minutes: mypy fetched, the modules setup.py lists compiled);
marked ``packaging``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT, copy_checkout, released_wheel

pytestmark = pytest.mark.packaging


def _run(argv: list[str | Path], cwd: Path, timeout: float, **extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(extra)
    done = subprocess.run(
        [str(arg) for arg in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_compiled_build_installs_from_a_bare_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path, timeout=300)
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
    released = released_wheel("*manylinux*.whl")
    if released is not None:
        _run([*pip, "install", "-q", f"{released}[http]"], cwd=tmp_path, timeout=600)
    else:
        source = copy_checkout(tmp_path / "snodo-src")
        _run([*pip, "install", "-q", ".[http]"], cwd=source, timeout=1800, SNODO_COMPILE="1")
    version = _run([venv / "bin" / "snodo", "version"], cwd=tmp_path, timeout=60)
    listed = re.findall(r'^    "(snodo/[a-z_/]+)\.py",$', (ROOT / "setup.py").read_text(), re.M)
    assert version.startswith(f"snodo 0.1.0, compiled ({len(listed)} extension modules);"), version
    # The compiled request path answers, and checks what it declares.
    script = (
        "import asyncio, json\n"
        "from snodo.server import Server\n"
        "server = Server('w', '1')\n"
        "@server.tool\n"
        "def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
        "meta = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',\n"
        "        'io.modelcontextprotocol/clientCapabilities': {}}\n"
        "call = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call',\n"
        "        'params': {'_meta': meta, 'name': 'add', 'arguments': {'a': 2, 'b': 3}}}\n"
        "reply = asyncio.run(server.handle(json.dumps(call).encode()))\n"
        "print(reply.response['result']['content'][0]['text'])\n"
    )
    assert _run([venv / "bin" / "python", "-c", script], cwd=tmp_path, timeout=60) == "5\n"
