"""snodo state inspect: readable fields, and why a token would be refused."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snodo.cli import inspect_token
from snodo.core.state.keyring import Keyring

KEY = ("k1", b"k" * 32)
OTHER = ("k2", b"o" * 32)
PARAMS = {"name": "wizard", "arguments": {"topic": "x"}}


@dataclass
class Ctx:
    request_method: str = "tools/call"
    request_params: dict[str, Any] = field(default_factory=lambda: dict(PARAMS))
    now: float = 1_800_000_000.0

    def clock(self) -> float:
        return self.now


TOKEN = Keyring(keys=[KEY]).seal({"step": 1}, Ctx(), principal="alice")
REQUEST = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": PARAMS}


def test_fields_are_readable_without_keys() -> None:
    fields, verdict = inspect_token(TOKEN, now=1_800_000_001.0)
    assert fields["kid"] == "k1" and fields["data"] == {"step": 1}
    assert verdict.startswith("not expired")


def test_each_reason() -> None:
    now = 1_800_000_010.0
    assert inspect_token("nope")[1] == "malformed: not a state token"
    assert inspect_token(TOKEN, [OTHER], REQUEST, "alice", now)[1].startswith("unknown key id")
    assert inspect_token(TOKEN, [KEY], REQUEST, "bob", now)[1].startswith("bad signature")
    moved = {**REQUEST, "params": {**PARAMS, "arguments": {"topic": "y"}}}
    assert inspect_token(TOKEN, [KEY], moved, "alice", now)[1].startswith("bad signature")
    assert inspect_token(TOKEN, [KEY], REQUEST, "alice", now + 400)[1] == "expired 110 s ago"
    assert inspect_token(TOKEN, [KEY], REQUEST, "alice", now)[1].startswith("valid")


def test_command_line(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text("# current key first\nk1:" + KEY[1].hex() + "\n")
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST))
    old = Keyring(keys=[KEY]).seal({"step": 1}, Ctx(now=1_700_000_000.0), principal="alice")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "snodo",
            "state",
            "inspect",
            old,
            "--keys",
            str(keys),
            "--request",
            str(request),
            "--principal",
            "alice",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1  # sealed in 2023: expired by now
    assert '"kid": "k1"' in done.stdout and "expired" in done.stdout


def test_one_time_and_encrypted_tokens() -> None:
    now = 1_800_000_010.0
    once = Keyring(keys=[KEY]).seal({"step": 2}, Ctx(), principal="alice", once=True)
    assert inspect_token(once, [KEY], REQUEST, "alice", now)[1].startswith("valid")
    assert inspect_token(once, [KEY], REQUEST, "bob", now)[1].startswith("bad signature")
    sealed = Keyring(keys=[KEY], encrypted=True).seal({"step": 3}, Ctx(), principal="alice")
    fields, verdict = inspect_token(sealed, [KEY], REQUEST, "alice", now)
    assert fields == {"version": "e1", "kid": "k1"} and verdict.startswith("valid")
    assert inspect_token(sealed, [KEY], REQUEST, "alice", now + 400)[1].startswith("refused")
