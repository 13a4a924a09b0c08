"""Processes racing for the same id: exactly one wins it (SQLite on one host, Redis)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from tests.support.paths import ROOT

RACERS = 3
ROUNDS = 100


def run_race(store: str, target: str) -> list[int]:
    """Release the racers on one id at a time; return how many ids each won."""
    racers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.replay.race", store, target],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(RACERS)
    ]
    wins = [0] * RACERS
    try:
        pipes = [(racer.stdin, racer.stdout) for racer in racers]
        for _, out in pipes:
            assert out is not None
            assert out.readline().strip() == "ready"
        for round_ in range(ROUNDS):
            token_id = uuid.uuid4().hex
            # The same id to every racer, in a rotating order so nobody always starts first.
            order = [(round_ + k) % RACERS for k in range(RACERS)]
            for k in order:
                pipe = pipes[k][0]
                assert pipe is not None
                pipe.write(f"{token_id}\n")
                pipe.flush()
            results = []
            for _, out in pipes:
                assert out is not None
                results.append(int(out.readline()))
            assert sum(results) == 1, f"round {round_}: {results} won {token_id}"
            wins = [total + won for total, won in zip(wins, results, strict=True)]
        for racer in racers:
            assert racer.stdin is not None
            racer.stdin.close()
            assert racer.wait(timeout=30) == 0
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
                racer.wait()
            if racer.stdout is not None:
                racer.stdout.close()
    return wins


def test_sqlite_processes_sharing_one_file_let_exactly_one_win(tmp_path: Path) -> None:
    wins = run_race("sqlite", str(tmp_path / "ids.sqlite3"))
    assert sum(wins) == ROUNDS
    assert sum(1 for n in wins if n) >= 2, f"not a real race: {wins}"


def test_redis_clients_in_separate_processes_let_exactly_one_win(redis_url: str) -> None:
    wins = run_race("redis", redis_url)
    assert sum(wins) == ROUNDS
    assert sum(1 for n in wins if n) >= 2, f"not a real race: {wins}"
