"""Every Python block of the site runs: each ```python block in docs/ is a program file
shown whole, named by its title (``title="docs/examples/x.py"``) and equal to the file
character for character, so that a page reads as plain markdown where people read it
(a code host shows the code, not an include line) and never drifts from the program;
every program shown is run by a test (here for docs/examples/, by tests/examples for
examples/), and where a page shows a program's output (a ```console block starting
``$ python NAME.py``) it is the output the program prints today."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

DOCS = ROOT / "docs"
PYTHON_BLOCK = re.compile(r"^```python([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
CONSOLE_BLOCK = re.compile(
    r"^```console\n\$ python (\S+\.py)\n(.*?)^```$", re.MULTILINE | re.DOTALL
)
TITLE = re.compile(r'^ title="([\w/.-]+\.py)"$')
# Programs under examples/ that the site includes, and the test file that runs each.
RUN_ELSEWHERE = {
    "examples/weather.py": "tests/examples/test_readme.py",
    "examples/weather_client.py": "tests/examples/test_readme.py",
    "examples/http_auth.py": "tests/examples/test_readme.py",
    "examples/oauth_server.py": "tests/examples/test_readme.py",
    "examples/wire_models.py": "tests/examples/test_readme.py",
    "examples/preferences.py": "tests/examples/test_examples.py",
    "examples/protected.py": "tests/examples/test_examples.py",
    # It serves until stopped: snodo run serves it, and both eras and FastMCP read it.
    "examples/skills_server.py": "tests/extensions/skills/test_server_http.py",
    # It needs a protected server and a browser: its user agent is run by this test.
    "docs/examples/oauth_client.py": "tests/docs/test_oauth_client.py",
    # It needs a protected server and an authorization server that knows its key.
    "docs/examples/oauth_machine_client.py": "tests/oauth/test_machine_client.py",
    # A server to publish: its card, registry entry and bundle are made and checked there.
    "docs/examples/publishing.py": "tests/publishing/test_guide.py",
    # They need an authorization server that takes their grants (and an identity
    # provider, or a platform's signed token).
    "docs/examples/oauth_enterprise.py": "tests/oauth/test_jwt_bearer.py",
    "docs/examples/oauth_workload.py": "tests/oauth/test_jwt_bearer.py",
    # They serve until stopped: uvicorn runs each, and every flow is driven through it.
    "docs/examples/fastapi_app.py": "tests/transports/test_web_apps.py",
    "docs/examples/starlette_app.py": "tests/transports/test_web_apps.py",
    # They serve until stopped and sign in at a provider: uvicorn runs each before the
    # loopback one, and a client signs in through each.
    "docs/examples/fastapi_oauth.py": "tests/transports/test_web_apps.py",
    "docs/examples/starlette_oauth.py": "tests/transports/test_web_apps.py",
}
PROGRAMS = sorted(
    path
    for path in (p.relative_to(ROOT).as_posix() for p in (DOCS / "examples").glob("*.py"))
    if path not in RUN_ELSEWHERE
)


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "examples" not in p.parts)


def included() -> dict[str, list[str]]:
    """Each program shown, and the pages that show it; each block the program's text."""
    found: dict[str, list[str]] = {}
    for page in pages():
        for options, block in PYTHON_BLOCK.findall(page.read_text(encoding="utf-8")):
            match = TITLE.match(options)
            assert match, f"{page.name}: a python block without a program's title:\n{block}"
            path = match.group(1)
            assert (ROOT / path).is_file(), f"{page.name} shows {path}, which is not a file"
            assert block == (ROOT / path).read_text(encoding="utf-8"), (
                f"{page.name} shows {path} differently from the file: copy the file in again"
            )
            found.setdefault(path, []).append(page.name)
    return found


def test_every_python_block_is_a_program_a_test_runs() -> None:
    programs = included()
    assert programs, "no python block found: is the pattern still right?"
    for path in programs:
        assert (ROOT / path).is_file(), path
        if path in PROGRAMS:
            continue
        runner = RUN_ELSEWHERE.get(path)
        assert runner is not None, f"{path} is shown in the docs but no test runs it"
        assert Path(path).stem in (ROOT / runner).read_text(encoding="utf-8"), (path, runner)


def test_the_block_patterns_see_the_title_and_the_code() -> None:
    page = '```python\nprint(1)\n```\n```python title="a.py"\nx = 2\n```\n'
    blocks = PYTHON_BLOCK.findall(page)
    assert [(bool(TITLE.match(o)), b) for o, b in blocks] == [
        (False, "print(1)\n"),
        (True, "x = 2\n"),
    ]


def shown_output() -> dict[str, str]:
    shown = {}
    for page in pages():
        for name, output in CONSOLE_BLOCK.findall(page.read_text(encoding="utf-8")):
            shown[name] = output
    return shown


@pytest.mark.parametrize("program", PROGRAMS)
def test_the_program_runs_and_prints_what_its_page_shows(program: str) -> None:
    done = subprocess.run(
        [sys.executable, program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    expected = shown_output().get(Path(program).name)
    if expected is not None:
        assert done.stdout == expected
    assert program in included(), f"{program} is not shown on any page"
