"""Every test here runs a benchmark script end to end (its servers, its load, valgrind for
one): from 15 s to 90 s each on the 2-core machine beside the rest of the suite, so all
are marked slow and run in scripts/test's slow leg."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m selects on the marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)
