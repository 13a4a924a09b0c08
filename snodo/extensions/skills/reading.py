"""Reading a skill's file from disk as it was found, and nothing else.

The skills are scanned at start (and at each reload); a served file is read again on
each ``resources/read``. In between, whatever sits at its path may have changed: a link
to a file outside the skills root, a FIFO that no writer ever opens, a file grown to
gigabytes. So every read, the scan's included:

* walks the file's path from the skills root one component at a time, each opened
  relative to the directory before it with ``O_NOFOLLOW``: a link anywhere on the way
  is refused, never followed (a link the scan found inside the root was resolved
  then, and its target's path is the one walked);
* opens the file itself non-blocking and takes only a regular file (``fstat``), so a
  FIFO or a device answers at once with a refusal instead of holding a thread;
* reads at most ``limit`` bytes and refuses a file longer than that.

The catalog then sends the bytes only when their size and ``sha256:`` digest are
those it lists (``SkillFile.read``), so a client is never sent a file its entry does
not describe. Where the platform opens nothing relative to a directory (Windows),
the path resolved at read time must be the path the scan found, which refuses a link
as well.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["NotServable", "read_within"]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_COMMON: Final = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_DIRECTORY: Final = _COMMON | _NOFOLLOW | getattr(os, "O_DIRECTORY", 0)
_FILE: Final = _COMMON | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
WALKS: Final = bool(_NOFOLLOW) and os.open in os.supports_dir_fd
"""Whether paths are walked component by component (else checked once resolved)."""
_CHUNK: Final = 256 * 1024


class NotServable(OSError):
    """A skill's file that is not, now, the regular file inside the root it was."""


def read_within(root: Path, parts: Sequence[str], limit: int) -> bytes:
    """The bytes of the regular file at ``parts`` under ``root`` (a resolved directory),
    reached through no link, at most ``limit`` of them; ``NotServable`` otherwise (an
    ``OSError`` when the file is gone or unreadable)."""
    if not parts:
        raise NotServable("no file named")
    fd = _open_walked(root, parts) if WALKS else _open_checked(root, parts)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotServable("not a regular file")
        return _read(fd, limit)
    finally:
        os.close(fd)


def _open_walked(root: Path, parts: Sequence[str]) -> int:
    try:
        directory = os.open(root, _DIRECTORY)
        try:
            for name in parts[:-1]:
                inner = os.open(name, _DIRECTORY, dir_fd=directory)
                os.close(directory)
                directory = inner
            return os.open(parts[-1], _FILE, dir_fd=directory)
        finally:
            os.close(directory)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError | PermissionError):
            raise
        raise NotServable(f"reached through a link or not a file: {exc.strerror}") from None


def _open_checked(root: Path, parts: Sequence[str]) -> int:
    path = root.joinpath(*parts)
    if os.path.normcase(os.path.realpath(path)) != os.path.normcase(str(path)):
        raise NotServable("reached through a link")
    return os.open(path, _FILE)


def _read(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise NotServable(f"longer than {limit} bytes")
