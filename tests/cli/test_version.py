"""``snodo version``: the release and which build is installed, as the files say."""

from __future__ import annotations

import re
import subprocess
import sys

import snodo.core.jsonrpc
from snodo.cli import build
from tests.support.paths import ROOT


def test_the_build_is_what_the_imported_modules_are() -> None:
    compiled = not snodo.core.jsonrpc.__file__.endswith(".py")
    said = build()
    if compiled:
        assert re.fullmatch(r"compiled \(\d+ extension modules\)", said), said
    else:
        assert said == "pure Python"


def test_snodo_version_prints_release_build_and_platform() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "snodo", "version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    line = done.stdout.strip()
    release = r"snodo \S+( \(.*\))?"
    kind = r"(pure Python|compiled \(\d+ extension modules\))"
    assert re.fullmatch(rf"{release}, {kind}; Python 3\.\d+\.\d+, \w+ \w+", line), line
    assert build() in line
