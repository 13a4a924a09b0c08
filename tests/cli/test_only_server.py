"""``snodo run app.py`` (and ``snodo list``/``call`` of it) serves the module's only
``Server``; a module with none or several says so in one line, naming the way out."""

from __future__ import annotations

import json

from tests.support.processes import snodo


def test_the_only_server_is_found() -> None:
    named = snodo("list", "examples/preferences.py:server", "--output", "json")
    found = snodo("list", "examples/preferences.py", "--output", "json")
    assert named.returncode == found.returncode == 0, named.stderr + found.stderr
    assert json.loads(found.stdout) == json.loads(named.stdout)
    called = snodo("call", "examples/preferences.py", "preferences", "--no-input")
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "Nothing changed: you chose not to answer."


def test_none_or_several_is_one_line() -> None:
    none = snodo("run", "examples/walkthrough.py")
    assert (none.returncode, none.stderr.strip()) == (
        1,
        "snodo: examples/walkthrough.py holds no Server; name one with"
        " examples/walkthrough.py:name",
    )
    several = snodo("run", "tests/cli/broken/two_servers.py")
    assert (several.returncode, several.stderr.strip()) == (
        1,
        "snodo: tests/cli/broken/two_servers.py holds several Servers (admin, public);"
        " name one: tests/cli/broken/two_servers.py:NAME",
    )
