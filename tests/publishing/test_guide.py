"""docs/publishing.md shows the three documents of docs/examples/publishing.py: each is
what the command it names prints today (the bundle's manifest as ``snodo bundle``
writes it, its build platform apart)."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT
from tests.support.processes import snodo

# Slow: it runs the three commands, one of them building a bundle.
pytestmark = pytest.mark.slow

PAGE = ROOT / "docs" / "publishing.md"
PROGRAM = "docs/examples/publishing.py"
URL = "https://mcp.example.com/mcp"
BUILT = ("compatibility", "_meta")
"""What a bundle says of the machine that built it."""


def shown() -> list[Any]:
    blocks = re.findall(r"^```json\n(.*?)^```$", PAGE.read_text(), re.MULTILINE | re.DOTALL)
    return [json.loads(block) for block in blocks]


def test_the_page_shows_what_the_commands_print(tmp_path: Path) -> None:
    card, entry, manifest = shown()
    done = snodo("card", PROGRAM, "--url", URL)
    assert done.returncode == 0 and json.loads(done.stdout) == card
    done = snodo("server-json", PROGRAM, "--url", URL, "--package", "pypi:forecasts-mcp")
    assert done.returncode == 0 and json.loads(done.stdout) == entry
    bundle = tmp_path / "forecasts.mcpb"
    assert snodo("bundle", PROGRAM, "-o", str(bundle)).returncode == 0
    with zipfile.ZipFile(bundle) as zipped:
        written = json.loads(zipped.read("manifest.json"))
    assert list(written) == list(manifest)
    assert {k: v for k, v in written.items() if k not in BUILT} == {
        k: v for k, v in manifest.items() if k not in BUILT
    }
