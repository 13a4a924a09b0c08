"""The copy of the repository a spec bump was added to, for the add-revision tests."""

from __future__ import annotations

from typing import Any

import pytest

from tests.generator.bump import Added, add_revision, fictitious


@pytest.fixture(scope="module")
def added(tmp_path_factory: pytest.TempPathFactory, raw_schema: dict[str, Any]) -> Added:
    """The copy of the repository after ``add-revision 2027-01-26 --from 2026-07-28``."""
    return add_revision(tmp_path_factory, fictitious(raw_schema))
