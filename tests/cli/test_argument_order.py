"""Options anywhere on the command line, as people type them: between the server and
the tool of ``snodo call``, after a prompt's name, before or after ``snodo list``'s
server, and after the URL of ``snodo proxy`` (which took them as a command to start)."""

from __future__ import annotations

import json

import pytest

from tests.support.processes import SNODO, serving, snodo, snodo_run

TARGET = "examples/preferences.py:server"
DECLINED = "Nothing changed: you chose not to answer."


def test_an_option_between_the_server_and_the_tool() -> None:
    done = snodo("call", TARGET, "--era", "legacy", "--no-input", "preferences")
    assert (done.returncode, done.stdout.strip()) == (0, DECLINED), done.stderr


def test_the_help_example_of_a_prompt_with_arguments() -> None:
    """``--prompt NAME`` then ``key=value``: the pair is the prompt's argument."""
    done = snodo("call", TARGET, "--prompt", "preferences_prompt", "--output", "json", "--no-input")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["messages"][0]["role"] == "user"
    extra = snodo("call", TARGET, "--prompt", "preferences_prompt", "style=short", "--no-input")
    assert extra.returncode == 1  # sent: the prompt takes no arguments, and says so
    assert extra.stderr == (
        "snodo: RequestError: -32602: Unknown argument(s) for prompt preferences_prompt:"
        " ['style']\n"
    )


@pytest.mark.parametrize(
    "words",
    [
        ["--prompt", "review", "code=x", "style=long"],
        ["code=x", "--prompt", "review", "style=long"],
        ["code=x", "style=long", "--prompt", "review"],
        ["--prompt", "review", "style=long", "code=x"],
    ],
)
def test_a_prompts_arguments_in_any_order(words: list[str]) -> None:
    """The first ``key=value`` is an argument, not a tool's name (docs/hosts.md)."""
    done = snodo("call", "tests/cli/typed_server.py:server", *words)
    assert (done.returncode, done.stdout) == (0, "[user] Review 'x', long.\n"), done.stderr


def test_a_tool_with_a_prompt_or_a_resource_is_one_line() -> None:
    typed = "tests/cli/typed_server.py:server"
    both = snodo("call", typed, "review", "--prompt", "review")
    assert both.stderr == "snodo: 'review': name a tool or use --prompt, not both\n"
    read = snodo("call", typed, "--resource", "notes://x", "a=1")
    assert read.stderr == "snodo: --resource URI takes no arguments: the URI says what to read\n"
    twice = snodo("call", typed, "--resource", "notes://x", "--prompt", "review")
    assert twice.stderr == "snodo: give --prompt NAME or --resource URI, not both\n"


def test_list_with_options_before_and_after_the_server() -> None:
    after = snodo("list", TARGET, "--output", "json")
    before = snodo("list", "--output", "json", TARGET)
    assert after.returncode == before.returncode == 0, after.stderr + before.stderr
    assert json.loads(after.stdout) == json.loads(before.stdout)


def test_an_unknown_option_is_still_refused() -> None:
    done = snodo("call", TARGET, "preferences", "--bogus")
    assert done.returncode == 2
    assert "unrecognized arguments: --bogus" in done.stderr
    run = snodo("run", TARGET, "--bogus")
    assert run.returncode == 2 and "unrecognized arguments: --bogus" in run.stderr


def test_proxy_options_after_the_url() -> None:
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as backend:
        url = f"{backend.base}/mcp"
        front = lambda port: [  # noqa: E731
            *SNODO,
            "proxy",
            url,
            "--transport",
            "http",
            "--port",
            str(port),
            "--name",
            "front",
        ]
        with serving(front) as proxied:
            done = snodo("call", f"{proxied.base}/mcp", "preferences", "--no-input")
            assert (done.returncode, done.stdout.strip()) == (0, DECLINED), done.stderr
    stray = snodo("proxy", url, "--port", "1", "extra")
    assert stray.returncode == 1 and "after the URL only options, not 'extra'" in stray.stderr
