"""``snodo install``: each host's file written exactly (literal expected files), another
server's entry kept, the same name refused without --force, a backup kept, --print."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.processes import snodo

PYTHON = json.dumps(sys.executable)
API_KEY = ',\n        "API_KEY": "k1"'


def install(
    project: Path, *argv: str, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home or project / "home"), "PATH": "/usr/bin:/bin"}
    if home is not None:
        env["XDG_CONFIG_HOME"] = str(home / ".config")
    return snodo("install", *argv, cwd=project, env={**env, "PYTHONPATH": str(ROOT)})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("from snodo import Server\nserver = Server('app', '1')\n")
    return tmp_path


def stdio_entry(project: Path, typed: bool, extra_env: str = "") -> str:
    kind = '\n      "type": "stdio",' if typed else ""
    return f"""{{{kind}
      "command": {PYTHON},
      "args": [
        "-P",
        "-m",
        "snodo",
        "run",
        "{project}/app.py:server",
        "--transport",
        "stdio"
      ],
      "env": {{
        "PYTHONPATH": "{project}"{extra_env}
      }}
    }}"""


@pytest.mark.parametrize(
    ("host", "path", "key", "typed"),
    [
        ("claude-code", ".mcp.json", "mcpServers", True),
        ("cursor", ".cursor/mcp.json", "mcpServers", False),
        ("vscode", ".vscode/mcp.json", "servers", True),
        ("mcp-json", "mcp.json", "mcpServers", False),
    ],
)
def test_each_project_host_gets_its_own_file(
    project: Path, host: str, path: str, key: str, typed: bool
) -> None:
    done = install(project, host, "app.py:server", "--env", "API_KEY=k1")
    assert done.returncode == 0, done.stderr
    entry = stdio_entry(project, typed, API_KEY)
    expected = f"""{{
  "{key}": {{
    "app": {entry}
  }}
}}
"""
    assert (project / path).read_text() == expected


def test_claude_desktop_on_linux_keeps_other_servers_and_a_backup(project: Path) -> None:
    home = project / "home"
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    before = (
        '{\n  "mcpServers": {\n    "other": {\n      "command": "other-server"\n    }\n  },\n'
        '  "theme": "dark"\n}\n'
    )
    config.write_text(before)
    done = install(project, "claude-desktop", "app.py:server", home=home)
    assert done.returncode == 0, done.stderr
    expected = f"""{{
  "mcpServers": {{
    "other": {{
      "command": "other-server"
    }},
    "app": {stdio_entry(project, False)}
  }},
  "theme": "dark"
}}
"""
    assert config.read_text() == expected
    assert (config.parent / "claude_desktop_config.json.bak").read_text() == before
    again = install(project, "claude-desktop", "app.py:server", home=home)
    assert again.returncode == 1
    assert "already has a server 'app': --force replaces it" in again.stderr
    assert config.read_text() == expected, "refused: nothing written"
    forced = install(project, "claude-desktop", "app.py:server", "--force", home=home)
    assert forced.returncode == 0 and config.read_text() == expected


def test_http_entries_env_files_and_print(project: Path) -> None:
    (project / ".env").write_text("# secrets\nTOKEN='abc'\n\nREGION=eu\n")
    done = install(project, "cursor", "--url", "https://mcp.example.com/mcp", "--print")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "mcpServers": {"mcp.example.com": {"url": "https://mcp.example.com/mcp"}}
    }
    typed = install(
        project, "claude-code", "--url", "http://127.0.0.1:8000/mcp", "--name", "n", "--print"
    )
    assert json.loads(typed.stdout) == {
        "mcpServers": {"n": {"type": "http", "url": "http://127.0.0.1:8000/mcp"}}
    }
    printed = install(project, "mcp-json", "app.py:server", "--env-file", ".env", "--print")
    env = json.loads(printed.stdout)["mcpServers"]["app"]["env"]
    assert env == {"PYTHONPATH": str(project), "TOKEN": "abc", "REGION": "eu"}
    assert not (project / "mcp.json").exists(), "--print writes nothing"


def test_refusals_are_one_line(project: Path) -> None:
    remote = install(project, "claude-desktop", "--url", "https://x.example/mcp")
    assert remote.returncode == 1 and remote.stderr.startswith("snodo: Claude Desktop adds remote")
    missing = install(project, "cursor", "nope.py:server")
    assert missing.stderr.strip() == "snodo: nope.py does not exist"
    (project / "mcp.json").write_text("{not json")
    broken = install(project, "mcp-json", "app.py:server")
    assert "is not JSON" in broken.stderr and (project / "mcp.json").read_text() == "{not json"
    helped = install(project, "--help")
    assert "snodo install claude-desktop app.py:server" in helped.stdout


def test_a_linked_backup_is_refused_and_its_target_untouched(project: Path) -> None:
    """A project carrying ``.mcp.json.bak`` as a link to a start-up file: refused, and the
    file the link names keeps its content."""
    victim = project / "home" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text("# mine\n")
    (project / ".mcp.json").write_text('{"mcpServers": {}}\n')
    (project / ".mcp.json.bak").symlink_to(victim)
    done = install(project, "claude-code", "app.py:server")
    assert done.returncode == 1
    assert done.stderr == (
        f"snodo: {Path('.mcp.json.bak')} is a symbolic link; snodo install does not write"
        " through links: nothing was written\n"
    )
    assert victim.read_text() == "# mine\n"
    assert (project / ".mcp.json").read_text() == '{"mcpServers": {}}\n'


def test_a_dangling_linked_config_is_refused_and_nothing_created(project: Path) -> None:
    """A dangling ``.mcp.json`` link: the secrets are not written where it points."""
    target = project / "elsewhere" / "collected.json"
    target.parent.mkdir()
    (project / ".mcp.json").symlink_to(target)
    done = install(project, "claude-code", "app.py:server", "--env", "API_KEY=secret")
    assert done.returncode == 1
    assert done.stderr.startswith("snodo: .mcp.json is a symbolic link;")
    assert done.stderr.count("\n") == 1
    assert not target.exists()


def test_secrets_go_to_a_private_file_and_modes_are_kept(project: Path) -> None:
    with_secret = install(project, "claude-code", "app.py:server", "--env", "API_KEY=k1")
    assert with_secret.returncode == 0, with_secret.stderr
    assert (project / ".mcp.json").stat().st_mode & 0o777 == 0o600
    shared = project / "mcp.json"
    shared.write_text('{"mcpServers": {}}\n')
    shared.chmod(0o640)
    done = install(project, "mcp-json", "app.py:server", "--env", "API_KEY=k1")
    assert done.returncode == 0, done.stderr
    assert shared.stat().st_mode & 0o777 == 0o640, "an existing file's mode is kept"
    assert (project / "mcp.json.bak").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in project.iterdir() if p.name.endswith(".tmp")) == []


def test_the_file_is_replaced_by_a_rename_not_rewritten_in_place(project: Path) -> None:
    """Written whole, then renamed: another name for the old file (a hard link) keeps the
    old content, and a reader never sees a half-written file."""
    config = project / "mcp.json"
    config.write_text('{"mcpServers": {}}\n')
    other_name = project / "kept.json"
    other_name.hardlink_to(config)
    done = install(project, "mcp-json", "app.py:server")
    assert done.returncode == 0, done.stderr
    assert other_name.read_text() == '{"mcpServers": {}}\n'
    assert "app" in json.loads(config.read_text())["mcpServers"]
    assert config.stat().st_ino != other_name.stat().st_ino
