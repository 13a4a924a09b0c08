"""The wheel a user installs: built from the checkout's files, installed into a bare
venv (no extras, no dev tools), every module imported, the command run.

Slow (about a minute: a build, a venv and a dependency install); marked ``packaging``
so ``pytest -m "not packaging"`` can leave it out of quick runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import copy_checkout, released_wheel

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_ROOTS = {"snodo": ROOT / "snodo"} | {
    path.name: path for path in sorted((ROOT / "generated").glob("snodo_wire*")) if path.is_dir()
}

# Modules that need an optional extra at import time, and the extra. The bare venv has
# none, so these are the only modules it does not import. Everything else must import
# with the base dependencies alone (optional packages are imported where they are used).
NEEDS_EXTRA: dict[str, str] = {
    # snodo.oauth is an httpx.Auth built on authlib: the package imports both.
    **{
        f"snodo.oauth{suffix}": "auth"
        for suffix in (
            "",
            ".assertion",
            ".challenge",
            ".discovery",
            ".dpop",
            ".errors",
            ".flow",
            ".jwt_bearer",
            ".kept",
            ".storage",
            ".user_agent",
        )
    },
    "snodo.auth.claims": "auth",
    "snodo.auth.discovery": "auth",
    "snodo.auth.dpop": "auth",
    "snodo.auth.exchange": "auth",
    "snodo.auth.id_jag": "auth",
    "snodo.auth.introspection": "auth",
    "snodo.auth.jwt": "auth",
    # The authorization-server proxy: httpx to the provider, joserfc, cryptography.
    **{
        f"snodo.auth.{name}": "auth"
        for name in (
            "first_party",
            "oidc",
            "oidc_tokens",
            "presets",
            "proxy",
            "proxy_clients",
            "proxy_consent",
            "proxy_documents",
            "proxy_grants",
            "proxy_limits",
            "proxy_store",
            "proxy_tokens",
            "proxy_upstream",
        )
    },
    "snodo.otel": "otel",
    "snodo.otel.marks": "otel",
    # uvicorn's HTTP protocols with snodo run's bounds: the serving process imports it.
    "snodo.transports.http_guard": "http",
    # The client's two HTTP ways out: its own HTTP/1.1 on httptools, and httpx's. The
    # transport imports whichever it uses when it is made.
    "snodo.client.transports.http11": "http",
    "snodo.client.transports.httpx_wire": "http",
    "snodo.extensions.tasks.otel": "otel",
}

pytestmark = pytest.mark.packaging


def _run(argv: list[str | Path], cwd: Path = ROOT, timeout: float = 300, **extra_env: str) -> str:
    """Run outside any venv's activation, so nothing resolves to the source tree."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(extra_env)
    done = subprocess.run(
        [str(arg) for arg in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return str(done.stdout)


def _modules(names: list[str]) -> list[str]:
    modules = []
    for name in names:
        top = name.split("/", 1)[0]
        if top in PACKAGE_ROOTS and name.endswith(".py"):
            parts = name.removesuffix(".py").split("/")
            if parts[-1] == "__init__":
                parts.pop()
            modules.append(".".join(parts))
    return sorted(modules)


@pytest.fixture(scope="module", params=["pure", "compiled"])
def wheel(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pure-Python wheel, and the compiled one (setup.py, SNODO_COMPILE=1): those
    ``scripts/release`` made into ``SNODO_RELEASE_DIR`` when ``./scripts/test`` ran it
    just before, else built here from the checkout's files."""
    pattern = "snodo-*-py3-none-any.whl" if request.param == "pure" else "*manylinux*.whl"
    released = released_wheel(pattern)
    if released is not None:
        return released
    work = tmp_path_factory.mktemp(f"wheel-{request.param}")
    source = copy_checkout(work / "src")
    compile_ = "1" if request.param == "compiled" else "0"
    argv: list[str | Path] = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q"]
    _run([*argv, "-w", work / "dist", source], timeout=600, SNODO_COMPILE=compile_)
    (built,) = (work / "dist").glob("snodo-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", home])
    python = home / "bin" / "python"
    # The dev venv's pip installs into the bare one; the runtime dependencies come from
    # the configured indexes (a local cache or mirror where there is one).
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", wheel], timeout=600)
    return home


def test_the_wheel_holds_every_package_the_license_and_markers(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for top, folder in PACKAGE_ROOTS.items():
        for init in folder.rglob("__init__.py"):
            package = init.parent.relative_to(folder.parent)
            assert f"{package.as_posix()}/__init__.py" in names, f"{package} is not in the wheel"
        assert f"{top}/py.typed" in names, f"{top}/py.typed is not in the wheel"
    licenses = [name for name in names if name.endswith(".dist-info/licenses/LICENSE")]
    assert len(licenses) == 1
    text = zipfile.ZipFile(wheel).read(licenses[0]).decode()
    assert (ROOT / "LICENSE").read_text() == text
    assert "Apache License" in text and "Version 2.0" in text
    assert not [name for name in names if name.startswith(("tests/", "generator/", "examples/"))]


def test_every_module_imports_in_a_bare_venv(wheel: Path, venv: Path) -> None:
    modules = _modules(zipfile.ZipFile(wheel).namelist())
    assert "snodo.transports.http" in modules and "snodo_wire.models" in modules
    for top in PACKAGE_ROOTS:
        assert top in modules
    wanted = [m for m in modules if m not in NEEDS_EXTRA and m != "snodo.__main__"]
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    _run([venv / "bin" / "python", "-c", script, *wanted], cwd=venv)
    found = _run([venv / "bin" / "python", "-c", "import snodo; print(snodo.__file__)"], cwd=venv)
    assert Path(found.strip()).is_relative_to(venv)


def test_the_compiled_wheel_holds_what_setup_py_compiles_and_runs_it(
    wheel: Path, venv: Path
) -> None:
    """Each module setup.py lists is an extension module in the compiled wheel (and none
    in the pure one); in the bare venv it is what imports, and answers a tools/call."""
    setup = (ROOT / "setup.py").read_text()
    listed = re.findall(r'^    "(snodo/[a-z_/]+)\.py",$', setup, re.MULTILINE)
    assert "snodo/server" not in listed and "snodo/transports/http" in listed
    names = zipfile.ZipFile(wheel).namelist()
    extensions = {name.split(".", 1)[0] for name in names if name.endswith(".so")}
    if wheel.name.endswith("-none-any.whl"):  # the pure wheel
        assert extensions == set()
        return
    assert extensions == {*listed, "snodo__mypyc"}
    script = """
import asyncio, json
import snodo.core.jsonrpc
from snodo.server import Server
assert not snodo.core.jsonrpc.__file__.endswith(".py"), snodo.core.jsonrpc.__file__
server = Server("w", "1")
@server.tool
def add(a: int, b: int) -> int:
    return a + b
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"_meta": meta, "name": "add", "arguments": {"a": 2, "b": 3}}}
reply = asyncio.run(server.handle(json.dumps(call).encode()))
print(reply.response["result"]["content"][0]["text"])
call["params"]["arguments"]["b"] = "3"
print(asyncio.run(server.handle(json.dumps(call).encode())).response["result"]["isError"])
"""
    assert _run([venv / "bin" / "python", "-c", script], cwd=venv).split() == ["5", "True"]


def test_the_source_distribution_builds_a_wheel(tmp_path: Path) -> None:
    """The sdist carries the in-tree build backend its pyproject.toml names, and builds
    (pure Python, whatever SNODO_COMPILE says: only a wheel from the checkout compiles)."""
    source = copy_checkout(tmp_path / "src")
    argv: list[str | Path] = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q"]
    build = [sys.executable, "-m", "build", "--sdist", "--outdir", tmp_path / "sdist", source]
    _run(build, cwd=source, timeout=600, SNODO_COMPILE="1")
    (sdist,) = (tmp_path / "sdist").glob("snodo-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"setup.py", "build_backend/snodo_build.py", "pyproject.toml"} <= names
    _run([*argv, "-w", tmp_path / "dist", sdist], timeout=600)
    (built,) = (tmp_path / "dist").glob("snodo-*.whl")
    assert built.name.endswith("-none-any.whl")


@pytest.mark.parametrize("command", [["snodo"], ["python", "-m", "snodo"]])
def test_the_command_runs_from_the_bare_venv(venv: Path, command: list[str]) -> None:
    out = _run([venv / "bin" / command[0], *command[1:], "--help"], cwd=venv)
    assert out.startswith("usage: snodo")
    assert "{run,state,version,list,call,auth,proxy,install,dev,card,server-json,bundle}" in out


# Each module imported in a process of its own (forked after ``import snodo``, which the
# import of any of them runs first): what the import raised, as the last line of its
# traceback. One interpreter start instead of one per module (about a minute less).
IMPORT_EACH = """
import importlib, os, sys, traceback
import snodo
for name in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(name)
            line = "imported"
        except BaseException as exc:
            line = traceback.format_exception_only(exc)[-1].strip()
        os.write(write, line.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        line = pipe.read().decode()
    os.waitpid(pid, 0)
    print(name, line.replace("\\n", " "), sep="\\t")
"""


def test_modules_without_their_extra_say_which_extra(venv: Path) -> None:
    out = _run([venv / "bin" / "python", "-c", IMPORT_EACH, *sorted(NEEDS_EXTRA)], cwd=venv)
    lines = dict(line.split("\t", 1) for line in out.splitlines())
    assert sorted(lines) == sorted(NEEDS_EXTRA)
    for module, last in lines.items():
        # The message names the module, or the package or another module of the same
        # extra whose import failed on its way.
        assert last != "imported", f"{module} imported without its extra"
        named, _, rest = last.partition("Error: ")[2].partition(" ")
        on_its_way = NEEDS_EXTRA.get(named) == NEEDS_EXTRA[module]
        assert module == named or module.startswith(f"{named}.") or on_its_way, last
        assert rest.startswith(f"needs the snodo[{NEEDS_EXTRA[module]}] extra"), last


def test_http_without_its_extra_says_which_extra(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("from snodo.server import Server\nserver = Server('a', '1')\n")
    argv = [venv / "bin" / "snodo", "run", "app:server", "--transport", "http"]
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0
    assert done.stderr == (
        "snodo: --transport http needs the snodo[http] extra: pip install 'snodo[http]'\n"
    )


def test_observing_without_its_extra_says_which_extra(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("from snodo.server import Server\nserver = Server('a', '1')\n")
    argv = [venv / "bin" / "snodo", "run", "app:server", "--request-log"]
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0
    assert done.stderr == (
        "snodo: tracing, metrics and request logs need the snodo[otel] extra: "
        "pip install 'snodo[otel]'\n"
    )
