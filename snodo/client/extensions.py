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

A half may take a kind of result the core protocol does not define (its ``results``, a
``ResultKind``: the tasks extension's ``"task"``): a result of that ``resultType``, to
any request, is the half's to follow (``follow``), given a ``Following`` (how to send,
the client's input handlers, the call's bounds), and what it returns is the call's; a
result of a kind no half takes is a ``ProtocolViolation``. ``client.resume(paused)``
hands the half what it ``resumes`` (a task's handle).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from snodo.client.handlers import InputHandlers
from snodo.client.rounds import FlowBounds

__all__ = ["ClientExtension", "Declaring", "Following", "ResultKind", "Send"]

Send = Callable[[str, dict[str, Any], float | None], Awaitable[dict[str, Any]]]
"""Sends one modern request (method, params), bounded by a ``time.monotonic()`` instant
or not; returns its result."""


@dataclass(frozen=True, slots=True)
class Following:
    """What a half is given to follow a result it takes, or to act on what it resumes."""

    send: Send
    inputs: InputHandlers
    """The client's input handlers: what a half answers input requests with."""
    bounds: FlowBounds
    """The call's rounds, backoff, deadline and limits."""
    until: float | None
    """The call's ``time.monotonic()`` deadline instant (None: none)."""


class ResultKind(Protocol):
    """A kind of result (its ``resultType``) a client half takes (``ClientExtension.results``)."""

    kind: str
    """The ``resultType`` taken (``"task"``)."""

    async def follow(
        self, following: Following, method: str, result: dict[str, Any], manual: bool
    ) -> Any:
        """What the call of ``method`` answered with ``result`` returns: a raw result (a
        dict, made the method's result model by the client) or anything else, handed
        back as it is (with ``manual``, say: a task's handle)."""
        ...

    def resumes(self, paused: object) -> bool:
        """Whether ``paused`` (given to ``client.resume``) is this half's to resume."""
        ...

    async def resume(
        self,
        following: Following,
        paused: Any,
        responses: Mapping[str, Any] | None,
        manual: bool,
    ) -> Any:
        """What ``client.resume(paused, responses, manual)`` returns (the result model
        of the request ``paused`` came from, or, with ``manual``, ``paused`` again)."""
        ...


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

    @property
    def results(self) -> dict[str, ResultKind]:
        """The kinds of result the halves take, by ``resultType``."""
        ...

    def following(self) -> Following:
        """How to send outside a call (``tasks/cancel``, say), within the client's
        bounds."""
        ...


class ClientExtension:
    """A client's half of an extension: its identifier and the settings it declares."""

    results: ResultKind | None = None
    """A kind of result it takes; None: none."""

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
        if self.results is not None:
            if self.results.kind in ("complete", "input_required"):
                raise ValueError(f"resultType {self.results.kind!r} is the core protocol's")
            client.results[self.results.kind] = self.results
