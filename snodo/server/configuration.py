"""How a ``Server`` is configured beyond the arguments most servers give: five small
frozen groups, each passed whole (``Server(limits=Limits(page_size=50))``).

``State`` seals request state, ``Caching`` hints how long results may be reused,
``Limits`` bounds what one process holds, ``Spec`` says how the revisions are spoken and
checked, and ``Publishing`` is what a card, registry entry or bundle says of the server.
A group left out keeps every default. (``snodo.server.settings`` is another thing: the
settings a server's *user* configures, read from the environment.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final, TypeVar

from snodo.core.caching import NO_CACHE, CacheHint, hints
from snodo.core.state.keyring import Keyring
from snodo.core.state.replay import ReplayGuard
from snodo.core.state.token import DEFAULT_TTL
from snodo.revisions import REVISIONS, Revisions
from snodo.server.subscriptions import MAX_OPEN_STREAMS
from snodo.server.threads import DEFAULT_THREAD_LIMIT

__all__ = [
    "MOVED",
    "Caching",
    "Limits",
    "Publishing",
    "Spec",
    "State",
    "check_page_size",
    "chosen",
    "refuse_moved",
    "state_of",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class State:
    """How request state is sealed, how long it lives, and whether it is one-time
    (docs/sealed-state.md). Every worker that answers a flow needs an equal one.

    - ``secret``: the key state is sealed with (32 random bytes or more); with neither
      it nor ``keys`` nor ``keyring``, ``SNODO_STATE_SECRET``, else a key of this
      process alone.
    - ``keys``: ``(id, secret)`` pairs, the first sealing and every one opening: rotation.
    - ``ttl``: seconds a sealed state stays valid.
    - ``guard``: True, an in-process ``MemoryGuard``; a ``SQLiteGuard`` or ``RedisGuard``
      shared by several processes; False, none (a replayed final retry runs again).
    - ``encrypted``: seal with AES-GCM, so a client cannot read what the state holds.
    - ``keyring``: a ``Keyring`` made whole, alone (it brings its ttl and guard).
    - ``clock``: the time source of sealing and of the guard.
    """

    secret: bytes | None = None
    keys: Sequence[tuple[str, bytes]] | None = None
    ttl: float = DEFAULT_TTL
    guard: ReplayGuard | bool = True
    encrypted: bool = False
    keyring: Keyring | None = None
    clock: Callable[[], float] = time.time


@dataclass(frozen=True, slots=True, kw_only=True)
class Caching:
    """The caching hints (``ttlMs``, ``cacheScope``) the server's cacheable results
    carry; ``NO_CACHE`` (not to be reused) unless given.

    - ``lists``: one ``CacheHint`` for every list, or one per list method
      (``{"tools/list": CacheHint(60_000)}``).
    - ``read``: ``resources/read``'s (a resource registered with ``cache=`` has its own).
    - ``discover``: ``server/discover``'s.
    """

    lists: CacheHint | Mapping[str, CacheHint] = NO_CACHE
    read: CacheHint = NO_CACHE
    discover: CacheHint = NO_CACHE

    def __post_init__(self) -> None:
        for name in ("read", "discover"):
            value = getattr(self, name)
            if not isinstance(value, CacheHint):
                raise TypeError(
                    f"Caching({name}=...) takes a CacheHint(ttl_ms, scope), such as"
                    f" CacheHint(60_000) for a minute, not {type(value).__name__}"
                )
        if not isinstance(self.lists, (CacheHint, Mapping)):
            raise TypeError(
                "Caching(lists=...) takes a CacheHint(ttl_ms, scope), or one per list"
                f" method ({{'tools/list': CacheHint(60_000)}}), not {type(self.lists).__name__}"
            )
        hints(self.lists, self.read, self.discover)  # each list method's, checked now


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """What one server process holds at once (the legacy era's own bounds are
    ``LegacyLimits``, given as ``Server(legacy=...)``).

    - ``page_size``: items per page of a list (None: every item on one page).
    - ``listen_streams``: listen streams open at once; one more is refused.
    - ``threads``: sync handlers running at once, each in a thread of the pool.
    """

    page_size: int | None = None
    listen_streams: int = MAX_OPEN_STREAMS
    threads: int = DEFAULT_THREAD_LIMIT

    def __post_init__(self) -> None:
        check_page_size(self.page_size)
        if not _whole(self.listen_streams) or self.listen_streams < 0:
            raise ValueError("Limits(listen_streams=...) must be a whole number, 0 or more")
        if not _whole(self.threads) or self.threads < 1:
            raise ValueError("Limits(threads=...) must be a positive integer")


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """How the protocol's revisions are spoken, beyond ``Server(versions=...)``.

    - ``revisions``: the catalog of revisions served (``snodo.revisions``; a draft's
      is added there).
    - ``capabilities``: flags a revision adds (``{"tools": {"validate": True}}``),
      advertised to the revisions that define them; refused if none served does.
    - ``supported_versions``: the modern versions offered, every legacy one kept (the
      older form of ``versions=``; not both).
    - ``check_answers``: validate every answer against its revision's models and log one
      that does not fit (None: on under ``snodo dev``, else as ``SNODO_CHECK_ANSWERS``).
    """

    revisions: Revisions = REVISIONS
    capabilities: Mapping[str, Any] | None = None
    supported_versions: Iterable[str] | None = None
    check_answers: bool | None = None

    def __post_init__(self) -> None:
        if self.check_answers is not None and not isinstance(self.check_answers, bool):
            raise TypeError("Spec(check_answers=...) takes True, False or None")


@dataclass(frozen=True, slots=True, kw_only=True)
class Publishing:
    """What a Server Card, registry entry and bundle say of the server beside its
    name, version, title and description (``snodo.publishing``).

    - ``card_name``: ``NAMESPACE/NAME``; with it the HTTP app serves the card at
      ``<endpoint>/server-card``.
    - ``repository``: its source's URL.
    - ``website_url``: its home page, in its ``Implementation`` too.
    - ``icons``: ``{"src": ..., "mimeType": ..., "sizes": [...]}`` each, in its
      ``Implementation`` too.
    """

    card_name: str | None = None
    repository: str | None = None
    website_url: str | None = None
    icons: Sequence[Mapping[str, Any]] = ()


G = TypeVar("G", State, Caching, Limits, Spec, Publishing)


MOVED: Final = {
    "state_keys": "state=State(keys=...)",
    "state_ttl": "state=State(ttl=...)",
    "state_guard": "state=State(guard=...)",
    "state_encrypted": "state=State(encrypted=...)",
    "keyring": "state=State(keyring=...)",
    "clock": "state=State(clock=...)",
    "list_cache": "caching=Caching(lists=...)",
    "read_cache": "caching=Caching(read=...)",
    "discover_cache": "caching=Caching(discover=...)",
    "page_size": "limits=Limits(page_size=...)",
    "list_page_size": "limits=Limits(page_size=...)",
    "max_listen_streams": "limits=Limits(listen_streams=...)",
    "thread_limit": "limits=Limits(threads=...)",
    "revisions": "spec=Spec(revisions=...)",
    "capabilities": "spec=Spec(capabilities=...)",
    "supported_versions": "spec=Spec(supported_versions=...)",
    "check_answers": "spec=Spec(check_answers=...)",
    "card_name": "publishing=Publishing(card_name=...)",
    "repository": "publishing=Publishing(repository=...)",
    "website_url": "publishing=Publishing(website_url=...)",
    "icons": "publishing=Publishing(icons=...)",
    "backend": "server.offering.serve_backend(...)",
    "tasks": "extensions=[Tasks(...)] (snodo.extensions.tasks)",
}
"""Where each setting that is not a ``Server`` argument of its own is given instead:
the names of the groups' fields, of older releases and of other toolkits."""


def refuse_moved(given: Mapping[str, object]) -> None:
    """TypeError for keyword arguments ``Server`` does not take, naming where each of
    the known ones goes."""
    name = next(iter(given))
    where = MOVED.get(name)
    if where is None:
        raise TypeError(f"Server() got an unexpected keyword argument {name!r}")
    raise TypeError(f"Server({name}=...) is given as {where}")


def check_page_size(size: object) -> None:
    """ValueError unless ``size`` is None (one page) or a positive integer: a page of
    none would send a client round the same cursor for ever."""
    if size is not None and (not _whole(size) or size < 1):  # type: ignore[operator]
        raise ValueError("Limits(page_size=...) must be a positive integer, or None for one page")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def chosen(argument: str, given: object, kind: type[G]) -> G:
    """``given`` (a ``kind``), or the defaults when it is None; TypeError naming the
    group to give when it is something else (never its value: a secret may be in it)."""
    if given is None:
        return kind()
    if not isinstance(given, kind):
        names = ", ".join(f"{f.name}=..." for f in fields(kind))
        raise TypeError(f"{argument}= takes snodo.{kind.__name__}({names}), not {_kind(given)}")
    return given


def _kind(given: object) -> str:
    if isinstance(given, Mapping):
        return f"a {type(given).__name__} of {sorted(map(str, given))}"
    return f"a {type(given).__name__}"


def state_of(secret: bytes | None, given: object) -> State:
    """The ``State`` a server is given: ``state``, or the ``state_secret`` shortcut's;
    TypeError when both are given."""
    if secret is None:
        return chosen("state", given, State)
    if given is not None:
        raise TypeError(
            "give state_secret=... or state=State(secret=..., ...), not both:"
            " put the secret in the State"
        )
    return State(secret=secret)
