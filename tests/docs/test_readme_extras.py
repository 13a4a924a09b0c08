"""The README's install lines name every extra a program may use, each on a line of its
own, and one line installs every extra a server may use at once."""

from __future__ import annotations

import re
import tomllib

from tests.support.paths import ROOT

FOR_WORKING_ON_SNODO = {"bench", "generate", "docs", "dev"}
"""Extras for working on snodo itself, which the README names in prose."""
TOO_LARGE_FOR_THE_ONE_LINE = {"search-model"}
"""The sentence model (31 MB), named beside the one line."""


def test_every_extra_is_in_the_readme_and_in_the_one_line() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = set(project["project"]["optional-dependencies"]) - FOR_WORKING_ON_SNODO
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    alone = set(re.findall(r"^pip install 'snodo\[([\w-]+)\]'", readme, re.MULTILINE))
    assert alone == extras
    together = re.findall(r"^pip install 'snodo\[([\w,-]+)\]'$", readme, re.MULTILINE)
    every = [set(line.split(",")) for line in together if "," in line]
    assert every == [extras - TOO_LARGE_FOR_THE_ONE_LINE]
