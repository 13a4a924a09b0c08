"""A command run on a pseudo-terminal, driven as a person would: wait for a prompt, type.

``Typing(argv)`` starts the command with its stdin, stdout and stderr on one pty;
``expect(text)`` reads until ``text`` appears (or fails after ``timeout`` with what
was seen), ``line(text)`` types a line, ``end_input()`` types Ctrl-D. ``finish()``
waits for the exit status and returns it with everything printed.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from collections.abc import Mapping, Sequence

from tests.support.paths import ROOT


class Typing:
    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.primary, secondary = pty.openpty()
        self.process = subprocess.Popen(
            list(argv),
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            close_fds=True,
        )
        os.close(secondary)
        self.seen = ""
        self._read_to = 0

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.primary], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.primary, 65536)
        except OSError:  # the other end closed: the command exited
            return False
        self.seen += chunk.decode(errors="replace").replace("\r\n", "\n")
        return bool(chunk)

    def expect(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen[self._read_to :]:
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(min(left, 0.5)) and self.process.poll() is not None):
                if text in self.seen[self._read_to :]:
                    break
                raise AssertionError(f"never saw {text!r}; the terminal shows:\n{self.seen}")
        self._read_to = self.seen.index(text, self._read_to) + len(text)

    def line(self, text: str) -> None:
        os.write(self.primary, text.encode() + b"\n")

    def end_input(self) -> None:
        """Ctrl-D at the start of a line: the terminal's end of input."""
        os.write(self.primary, b"\x04")

    def finish(self, timeout: float = 30.0) -> tuple[int, str]:
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.2)
        while self._read(0.1):
            pass
        status = self.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        os.close(self.primary)
        return status, self.seen
