"""The longest step of a spec bump's walkthrough (tests/generator/test_add_revision.py),
in a module of its own so that it runs beside the rest: after the one ``add-revision``
run, the generator's check and the tests that find revisions under ``schema/`` pass in
the copy, and the oracle finds the new package.

Marked slow: the copy's generator check and a pytest run in it (a minute alone, several
beside the rest of the suite).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.generator.bump import PACKAGE, REVISION, Added, environment, generator
from tests.support.packages import discovered

pytestmark = pytest.mark.slow


def test_check_and_the_tests_that_find_revisions_pass_in_the_copy(added: Added) -> None:
    done = generator(added.repo, added.cache, "check")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    # every pin of the checkout and the new one: checked, or a document schema not at hand
    said = re.search(
        r"(\d+) packages match schema \+ overlay \+ templates"
        r"(?:; not checked \(schema not at hand\): (.+))?$",
        done.stdout,
        re.MULTILINE,
    )
    assert said is not None, done.stdout
    unchecked = said[2].split(", ") if said[2] else []
    assert int(said[1]) + len(unchecked) == len(discovered()) + 1
    assert set(unchecked) <= {r.package for r in discovered() if r.overlay.document}
    tests = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            # Two workers: alone at the end of the slow leg, this has the machine to itself.
            "-n",
            "2",
            "tests/wire/test_oracle_built.py",
            "tests/generator/test_generator.py",
            "tests/generator/test_upstream_edits.py",
            "tests/core/test_revisions.py",
            "-k",
            f"{PACKAGE} or {REVISION} or not oracle",
        ],
        cwd=added.repo,
        env=environment(added.repo, added.cache),
        capture_output=True,
        text=True,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout[-4000:]
    assert (
        f"{PACKAGE}"
        in subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "tests/wire/test_oracle_built.py",
            ],
            cwd=added.repo,
            env=environment(added.repo, added.cache),
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    ), "the oracle found the new package"
