"""A bundle as a host meets it: ``snodo bundle`` writes it, the pinned MCP Bundle tools
(interop/mcpb: ``mcpb unpack`` and ``mcpb validate``) unpack it into an empty folder and
accept its manifest, and the server, started as its manifest says (its ``mcp_config``
with the folder and the user's settings put in, a bare Python of the same version, no
``PYTHONPATH``), lists its tools and answers a call to the official Python SDK's client.
Then ``snodo install`` takes the same bundle, and refuses a bundle that would write
outside its folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from snodo.publishing.unpack import read_manifest
from tests.publishing.schemas import errors
from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.paths import ROOT
from tests.support.processes import snodo

MCPB = ROOT / "interop" / "mcpb" / "node_modules" / ".bin" / "mcpb"
# Slow: it builds a bundle (snodo and its dependencies, about 9 MB) and runs it through
# the pinned mcpb tools and the official client.
pytestmark = pytest.mark.slow

PROGRAM = "docs/examples/publishing.py"

needs_mcpb = pytest.mark.skipif(
    not MCPB.exists(), reason="interop/mcpb is not installed (npm ci there; scripts/test does)"
)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "forecasts.mcpb"
    done = snodo("bundle", PROGRAM, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(
        r"snodo: wrote .*forecasts\.mcpb \(\d+ bytes, sha256 [0-9a-f]{64}\)\n", done.stderr
    )
    return out


def _mcpb(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MCPB), *argv], capture_output=True, text=True, timeout=120, check=False
    )


def test_the_manifest_is_the_servers_and_valid_for_the_pinned_schema(bundle: Path) -> None:
    manifest = read_manifest(bundle)
    assert errors("mcpb-manifest", manifest) == []
    assert (manifest["name"], manifest["version"]) == ("forecasts", "1.2.0")
    assert manifest["tools"] == [
        {"name": "forecast", "description": "The forecast for a city, in the units the user chose."}
    ]
    assert manifest["prompts"] == [
        {
            "name": "plan_a_day",
            "description": "Plan a day out around the forecast.",
            "arguments": ["city"],
            "text": "Plan a day out in ${arguments.city} around its weather forecast.",
        }
    ]
    assert manifest["user_config"]["api_key"] == {
        "type": "string",
        "title": "API key",
        "description": "Your forecast service's key.",
        "required": True,
        "sensitive": True,
    }
    assert manifest["server"]["mcp_config"]["env"] == {
        "API_KEY": "${user_config.api_key}",
        "UNITS": "${user_config.units}",
    }


def test_no_path_of_the_building_machine_is_in_it(bundle: Path) -> None:
    with zipfile.ZipFile(bundle) as zipped:
        names = zipped.namelist()
        manifest = zipped.read("manifest.json").decode()
        launcher = zipped.read("server/main.py").decode()
    assert str(ROOT) not in manifest + launcher and str(Path.home()) not in manifest + launcher
    assert "server/src/publishing.py" in names
    assert "server/lib/snodo/__init__.py" in names
    assert any(name.startswith("server/lib/pydantic_core/") for name in names)
    assert not [n for n in names if "__pycache__" in n or n.startswith("/") or ".." in n]


def test_the_same_server_makes_the_same_bundle(bundle: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.mcpb"
    assert snodo("bundle", PROGRAM, "-o", str(again)).returncode == 0
    assert again.read_bytes() == bundle.read_bytes()


@needs_mcpb
def test_mcpb_unpacks_and_validates_it(bundle: Path, tmp_path: Path) -> None:
    folder = tmp_path / "unpacked"
    folder.mkdir()
    unpacked = _mcpb("unpack", str(bundle), str(folder))
    assert unpacked.returncode == 0, unpacked.stdout + unpacked.stderr
    checked = _mcpb("validate", str(folder / "manifest.json"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Manifest schema validation passes!" in checked.stdout


def _as_the_manifest_says(folder: Path, values: dict[str, str]) -> dict[str, Any]:
    """The manifest's mcp_config with the folder and the user's values put in, as a host
    does (the host's own reading, not snodo's)."""
    config = json.loads((folder / "manifest.json").read_text())["server"]["mcp_config"]

    def put(text: str) -> str:
        text = text.replace("${__dirname}", str(folder))
        for key, value in values.items():
            text = text.replace("${user_config." + key + "}", value)
        return text

    return {
        "command": put(config["command"]),
        "args": [put(a) for a in config.get("args", [])],
        "env": {k: put(v) for k, v in config.get("env", {}).items()},
    }


@needs_mcpb
def test_the_unpacked_server_answers_the_official_client(bundle: Path, tmp_path: Path) -> None:
    folder = tmp_path / "host" / "forecasts"
    folder.mkdir(parents=True)
    assert _mcpb("unpack", str(bundle), str(folder)).returncode == 0
    started = _as_the_manifest_says(folder, {"api_key": "k-123", "units": "imperial"})
    assert started["command"] == "python3"
    # The host's python3: this Python's own interpreter, outside any venv, with no
    # PYTHONPATH (its site-packages may hold another pydantic: the bundle's comes first).
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "python3").symlink_to(Path(getattr(sys, "_base_executable", sys.executable)))
    env = {**started["env"], "PATH": f"{tools}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    spec = {
        "command": started["command"],
        "args": started["args"],
        "env": env,
        "cwd": str(tmp_path),
        "call": ["forecast", {"city": "Oslo"}],
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    done = subprocess.run(
        [
            str(legacy_sdk_python()),
            str(ROOT / "tests" / "publishing" / "sdk_stdio.py"),
            str(tmp_path / "spec.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == {
        "tools": ["forecast"],
        "call": ["1-day forecast for Oslo (imperial): sunny"],
    }


def test_snodo_install_takes_the_bundle(bundle: Path, tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    into = tmp_path / "bundles" / "forecasts"
    argv = ("install", "cursor", str(bundle), "--path", str(config), "--into", str(into))
    refused = snodo(*argv)
    assert refused.returncode == 1 and "--config api_key=..." in refused.stderr
    done = snodo(*argv, "--config", "api_key=k-123")
    assert done.returncode == 0, done.stderr
    entry = json.loads(config.read_text())["mcpServers"]["forecasts"]
    assert entry == {
        "command": "python3",
        "args": ["-I", "-S", str(into / "server" / "main.py")],
        "env": {"API_KEY": "k-123", "UNITS": "metric"},
    }
    assert (into / "manifest.json").is_file() and (into / "server" / "lib" / "snodo").is_dir()
    assert oct(config.stat().st_mode & 0o777) == "0o600", "it holds a secret"
    again = snodo(*argv, "--config", "api_key=k-123", "--force")
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("name", ["../escape.py", "/etc/escape.py", "server/../../escape.py"])
def test_a_bundle_that_writes_outside_its_folder_is_refused(
    bundle: Path, tmp_path: Path, name: str
) -> None:
    forged = tmp_path / "forged.mcpb"
    with zipfile.ZipFile(bundle) as source, zipfile.ZipFile(forged, "w") as out:
        out.writestr("manifest.json", source.read("manifest.json"))
        out.writestr(name, b"print('escaped')")
    into = tmp_path / "inside" / "x"
    done = snodo(
        "install",
        "cursor",
        str(forged),
        "--path",
        str(tmp_path / "m.json"),
        "--into",
        str(into),
        "--config",
        "api_key=k",
    )
    assert done.returncode == 1 and "outside its folder" in done.stderr
    assert not (tmp_path / "escape.py").exists() and not into.exists()


def test_a_zip_that_is_no_bundle_is_said_so(tmp_path: Path) -> None:
    junk = tmp_path / "junk.mcpb"
    junk.write_bytes(b"not a zip")
    done = snodo("install", "cursor", str(junk), "--print")
    assert done.returncode == 1 and "is not an MCP Bundle" in done.stderr
