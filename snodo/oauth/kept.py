"""Sign-ins kept on disk, one file per server, for a command line that signs in once
(``snodo auth login URL``) and whose later runs, and other programs, use the tokens.

Theory of operation. ``KeptTokens(server_url)`` is a ``TokenStorage`` reading and
writing ``<config>/snodo/auth/<digest of the URL>.json``: the tokens, the client's
registration at each authorization server (so signing in again does not register
again), and the loopback redirect URI the registration names. ``<config>`` is
``$XDG_CONFIG_HOME`` (``~/.config`` without it), ``%APPDATA%`` on Windows. The folder is
the user's alone (0700) and so is each file (0600, written whole to a temporary file and
renamed over the old one): a token is a password for as long as it lives.

Several processes may hold the same sign-in (``snodo call`` while ``snodo proxy``'s
workers run), and a refresh token is spent when used (the OAuth proxy, like most
servers, rotates it and revokes the grant if a spent one comes back). So every read is
from the file, and whoever refreshes holds ``locked()``, a lock on a file beside it
(``flock``) that ``OAuth(lock=...)`` takes around obtaining or refreshing tokens: the
second process waits, reads the tokens the first one wrote, and sends those.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from snodo.oauth.discovery import canonical_resource
from snodo.oauth.storage import ClientInfo, Tokens

__all__ = ["KeptTokens", "auth_folder", "kept_servers"]


def auth_folder() -> Path:
    """Where sign-ins are kept: ``$XDG_CONFIG_HOME/snodo/auth`` (``~/.config`` without
    it), ``%APPDATA%\\snodo\\auth`` on Windows."""
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "snodo" / "auth"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "snodo" / "auth"


def _private_folder(folder: Path) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if sys.platform != "win32" and folder.stat().st_mode & 0o077:
        folder.chmod(0o700)  # made earlier by someone less careful
    return folder


def kept_servers(folder: Path | None = None) -> list[str]:
    """The servers a sign-in is kept for, in the order of their URLs."""
    where = folder if folder is not None else auth_folder()
    servers = []
    for path in sorted(where.glob("*.json")) if where.is_dir() else []:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            servers.append(str(json.loads(path.read_text(encoding="utf-8")).get("server")))
    return sorted(server for server in servers if server != "None")


class KeptTokens:
    """The sign-in kept for ``server_url`` (``TokenStorage``), in ``folder``
    (``auth_folder()`` by default)."""

    def __init__(self, server_url: str, folder: Path | None = None) -> None:
        self.server = canonical_resource(server_url)
        self.folder = folder if folder is not None else auth_folder()
        name = hashlib.sha256(self.server.encode()).hexdigest()[:32]
        self.path = self.folder / f"{name}.json"
        self._lock_path = self.folder / f"{name}.lock"

    # -- the file ------------------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable: as good as none, and written anew on the next sign-in
        return record if isinstance(record, dict) and record.get("server") == self.server else {}

    def _write(self, record: dict[str, Any]) -> None:
        folder = _private_folder(self.folder)
        record = {**record, "server": self.server}
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:  # mkstemp: 0600
                json.dump(record, file, indent=1)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def exists(self) -> bool:
        """Whether tokens are kept for this server."""
        return self._read().get("tokens") is not None

    def forget(self) -> bool:
        """Remove the sign-in (tokens and registrations); whether there was one."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        with contextlib.suppress(OSError):
            self._lock_path.unlink()
        return True

    @property
    def redirect_uri(self) -> str | None:
        """The loopback redirect URI the kept registrations name."""
        value = self._read().get("redirect_uri")
        return value if isinstance(value, str) else None

    def keep_redirect_uri(self, redirect_uri: str) -> None:
        """Sign in at ``redirect_uri`` from now on; registrations made for another one
        are forgotten (an authorization server sends the user back only to the address a
        client registered)."""
        record = self._read()
        if record.get("redirect_uri") != redirect_uri:
            record["clients"] = {}
        record["redirect_uri"] = redirect_uri
        self._write(record)

    def forget_registrations(self) -> None:
        """Register anew (or use the client named) at the next sign-in."""
        record = self._read()
        if record.get("clients"):
            record["clients"] = {}
            self._write(record)

    # -- TokenStorage ----------------------------------------------------------------------

    async def get_tokens(self) -> Tokens | None:
        """The tokens as the file holds them now."""
        found = self._read().get("tokens")
        if not isinstance(found, dict):
            return None
        try:
            return Tokens(**found)
        except TypeError:
            return None  # written by another release: sign in again

    async def set_tokens(self, tokens: Tokens | None) -> None:
        """Keep ``tokens`` in the file (None forgets them, not the registrations)."""
        record = self._read()
        record["tokens"] = None if tokens is None else asdict(tokens)
        self._write(record)

    async def get_client(self, issuer: str) -> ClientInfo | None:
        """The registration kept for ``issuer``, or None."""
        found = self._read().get("clients", {}).get(issuer)
        if not isinstance(found, dict):
            return None
        try:
            return ClientInfo(**found)
        except TypeError:
            return None

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        """Keep ``client`` as the registration at ``issuer`` (None forgets it)."""
        record = self._read()
        found = record.get("clients")
        clients: dict[str, Any] = found if isinstance(found, dict) else {}
        if client is None:
            clients.pop(issuer, None)
        else:
            clients[issuer] = asdict(client)
        record["clients"] = clients
        self._write(record)

    # -- one process at a time -------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def locked(self) -> AsyncIterator[None]:
        """This sign-in's lock, held by one process at a time (``OAuth(lock=...)``):
        tokens are refreshed by one, and the others read what it wrote."""
        if sys.platform == "win32":  # no flock: each process refreshes on its own
            yield
            return
        import fcntl  # noqa: PLC0415 - POSIX only

        _private_folder(self.folder)
        descriptor = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            await asyncio.to_thread(fcntl.flock, descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing it lets the lock go
