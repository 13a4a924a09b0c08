"""The suite's own order: the longest files are handed out first (tests/conftest.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests.conftest import STARTED_FIRST, pytest_collection_modifyitems
from tests.support.paths import ROOT


def test_each_file_started_first_exists() -> None:
    missing = [path for path in STARTED_FIRST if not (ROOT / path).is_file()]
    assert not missing, f"moved or gone, update STARTED_FIRST: {missing}"


def test_the_longest_come_first_then_the_files_with_most_tests() -> None:
    ids = [
        "tests/core/test_jsonrpc.py::test_a",
        f"{STARTED_FIRST[1]}::test_b",
        "tests/core/test_envelope.py::test_c",
        "tests/core/test_envelope.py::test_d",
        f"{STARTED_FIRST[0]}::test_e[x]",
        "tests/core/test_layout.py::test_f",
    ]
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in ids]
    pytest_collection_modifyitems(cast(pytest.Config, None), cast(list[Any], items))
    assert [item.nodeid for item in items] == [ids[4], ids[1], ids[2], ids[3], ids[0], ids[5]]
