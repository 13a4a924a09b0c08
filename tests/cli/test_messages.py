"""What ``snodo run`` tells a person: where it serves, one ``snodo:`` line for each
mistake, and a logged traceback when a tool fails. Every case is a real CLI process."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, stop
from tests.support.wire import meta

# The console script, not ``python -m``: ``-m`` puts the current directory on sys.path
# by itself, the installed command does not.
SNODO = str(Path(sys.executable).with_name("snodo"))
META = meta()

WEATHER = """
from snodo.server import Server

server = Server("weather", "1.0.0")


@server.tool
def forecast(city: str) -> str:
    return f"sunny in {city}"


@server.tool
def broken() -> str:
    raise RuntimeError("the barometer fell off the wall")
"""

UNSCHEMATIC = """
import socket

from snodo.server import Server

server = Server("bad", "1.0.0")


@server.tool
def listen(port: int, conn: socket.socket) -> str:
    return "never"
"""


def snodo(*args: str, cwd: Path = ROOT, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SNODO, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def call(name: str, arguments: dict[str, str], id: int) -> str:
    params = {"name": name, "arguments": arguments, "_meta": META}
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def test_http_prints_the_url_it_serves() -> None:
    port = free_port()
    argv = [SNODO, "run", "examples/preferences.py:server", "--transport", "http"]
    process = subprocess.Popen(
        [*argv, "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert accepting(process, port)
    finally:
        stop(process)
    out, err = process.communicate(timeout=10)
    assert out == ""
    assert err == f"snodo: serving examples/preferences.py:server at http://127.0.0.1:{port}/mcp\n"


def test_a_proxy_names_its_backend() -> None:
    """Not the function each worker builds it with (snodo.cli.proxy_command)."""
    port = free_port()
    backend = [SNODO, "run", "examples/preferences.py:server"]
    process = subprocess.Popen(
        [SNODO, "proxy", "--transport", "http", "--port", str(port), "--", *backend],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert accepting(process, port)
    finally:
        stop(process)
    _, err = process.communicate(timeout=10)
    shown = shlex.join(backend)
    assert err.splitlines()[0] == f"snodo: proxying {shown} at http://127.0.0.1:{port}/mcp"


def test_a_module_in_the_current_directory_is_found(tmp_path: Path) -> None:
    write(tmp_path, "weather.py", WEATHER)
    done = snodo("run", "weather:server", cwd=tmp_path, stdin=call("forecast", {"city": "Oslo"}, 1))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["id"] == 1
    assert answer["result"]["content"] == [{"type": "text", "text": "sunny in Oslo"}]


def test_a_failing_tool_is_logged_with_its_traceback(tmp_path: Path) -> None:
    write(tmp_path, "weather.py", WEATHER)
    done = snodo("run", "weather.py:server", cwd=tmp_path, stdin=call("broken", {}, 2))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "the barometer fell off the wall"}]
    assert "Traceback" not in done.stdout
    assert done.stderr.startswith("WARNING:snodo:tool broken failed\nTraceback")
    assert 'in broken\n    raise RuntimeError("the barometer fell off the wall")' in done.stderr
    assert done.stderr.endswith("RuntimeError: the barometer fell off the wall\n")


# With --workers the parent checks before any worker starts, so it is said once.
SERVING = [[], ["--transport", "http", "--workers", "2", "--port", "1"]]


@pytest.mark.parametrize("options", SERVING)
def test_a_missing_file_is_one_line(tmp_path: Path, options: list[str]) -> None:
    done = snodo("run", "wether.py:server", *options, cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr == "snodo: no such file: wether.py\n"


@pytest.mark.parametrize("options", SERVING)
@pytest.mark.parametrize("target", ["wether", "wether.forecasts"])
def test_a_missing_module_is_one_line(tmp_path: Path, target: str, options: list[str]) -> None:
    done = snodo("run", f"{target}:server", *options, cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr == (
        "snodo: no module named 'wether' (looked in the current directory and sys.path)\n"
    )


def test_a_module_that_imports_a_missing_module_keeps_its_traceback(tmp_path: Path) -> None:
    write(tmp_path, "weather.py", "import barometer_of_the_gods\n")
    done = snodo("run", "weather:server", cwd=tmp_path)
    assert done.returncode != 0
    assert "Traceback" in done.stderr
    assert done.stderr.endswith("ModuleNotFoundError: No module named 'barometer_of_the_gods'\n")


def test_a_missing_http_extra_is_one_line() -> None:
    # uvicorn is installed here; blocking its import is what a base install looks like
    # (tests/packaging runs the same command in a venv that truly lacks it).
    program = (
        "import sys; sys.modules['uvicorn'] = None; from snodo.cli import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    argv = ["run", "examples/preferences.py:server", "--transport", "http"]
    done = subprocess.run(
        [sys.executable, "-c", program, *argv, "--port", str(free_port())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert done.stderr == (
        "snodo: --transport http needs the snodo[http] extra: pip install 'snodo[http]'\n"
    )


def test_a_parameter_type_without_json_schema_is_one_line(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", UNSCHEMATIC)
    for target, shown in (("bad.py:server", "bad.py"), ("bad:server", "bad")):
        done = snodo("run", target, cwd=tmp_path)
        assert done.returncode != 0
        assert done.stderr == (
            f"snodo: {shown}: tool listen: parameter 'conn' has type socket.socket, which "
            "cannot be turned into a JSON Schema; annotate it with a JSON type (or a "
            "pydantic model), or pass input_schema=\n"
        )


def test_a_folder_taken_for_the_package_is_one_line(tmp_path: Path) -> None:
    """``python -m snodo`` beside a clone named snodo: Python imports that folder as a
    namespace package (the package's __init__ never runs, and every name is missing);
    the command says so instead of failing further on. Simulated here by importing the
    package as such a namespace, which an editable install beside the folder gives."""
    clone = tmp_path / "snodo"
    clone.mkdir()
    program = (
        "import importlib.util, runpy, sys\n"
        "from importlib.machinery import ModuleSpec\n"
        "spec = ModuleSpec('snodo', None, is_package=True)\n"
        f"spec.submodule_search_locations = [{str(clone)!r}, {str(ROOT / 'snodo')!r}]\n"
        "sys.modules['snodo'] = importlib.util.module_from_spec(spec)\n"
        "runpy.run_module('snodo', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, "version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == (
        f"snodo: Python took {clone} for the snodo package (a clone of snodo there?):"
        " run from another folder, or rename that one\n"
    )
