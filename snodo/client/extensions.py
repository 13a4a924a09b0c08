"""Extensions for clients: what a client declares beyond the core protocol, and the
hooks an extension plugs into it (the client's public extension API).

``Client(extensions={id: settings})`` declares extensions by identifier, on every
modern request and in a legacy ``initialize``. An extension with a client half adds
it with ``client.add_extension(half)``, a ``ClientExtension``: declared the same way
(to modern requests alone when made with ``legacy=False``), and ``install`` plugs in
what else it changes. A half is one per client: a later one with the same identifier
replaces it. The halves snodo ships (``snodo.extensions``) are made with the client
they serve (``SkillsClient(client)``) and use nothing of it but this API and its
public methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["ClientExtension", "Declaring"]


class Declaring(Protocol):
    """What ``ClientExtension.install`` reaches of the ``Client``."""

    @property
    def declared(self) -> dict[str, dict[str, Any]]:
        """The extensions declared in both eras, by identifier, with their settings."""
        ...

    @property
    def declared_modern(self) -> dict[str, dict[str, Any]]:
        """Those declared on modern requests only."""
        ...


class ClientExtension:
    """A client's half of an extension: its identifier and the settings it declares."""

    def __init__(
        self, extension_id: str, settings: Mapping[str, Any] | None = None, *, legacy: bool = True
    ) -> None:
        if "/" not in extension_id:
            raise ValueError(
                f"an extension identifier looks like vendor.example/name: {extension_id!r}"
            )
        self.id = extension_id
        self.settings = dict(settings or {})
        self.legacy = legacy
        """Whether a legacy ``initialize`` declares it too."""

    def install(self, client: Declaring) -> None:
        """Declare the extension at ``client`` (``Client.add_extension`` calls this)."""
        (client.declared if self.legacy else client.declared_modern)[self.id] = self.settings
