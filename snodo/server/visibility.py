"""Which of a server's tools, prompts, resources and templates each caller sees.

An item is shown unless something hides it. In order, later ones winning:

1. its registration: ``enabled=False`` starts it hidden;
2. the server's rules, ``server.enable(...)`` and ``server.disable(...)`` by names,
   tags or a predicate, in the order they were made (this process's: every worker runs
   the same program);
3. the caller's own rules, ``ctx.enable(...)``, ``ctx.disable(...)`` (by names or tags),
   kept per principal, else per legacy session, in the server's state store
   (``Server(user_store=...)``: memory, an SQLite file or Redis, so that every worker
   sharing it agrees), until ``ctx.reset_visibility()`` or the store's ttl;
4. its ``visible=`` function of the request's ``Context`` (the token's claims: roles,
   groups), beside ``scopes=``: what it refuses nothing above shows;
5. the hooks added with ``Visibility.add_hook`` (an extension's rule of its own, a
   function of the context, the kind and the key; ``snodo.server.extensions`` plugs an
   extension's ``visibility`` in here): what one hides stays hidden.

A hidden item answers exactly as one that does not exist, in every method and both eras
(``snodo.server.methods``). A change sends the matching ``list_changed`` to the listen
streams and legacy sessions, of every worker through the notification bus; a change of
one caller's rules is sent to all of them (a client that re-lists finds its list as
it was). A list that depends on the caller (any caller rule, any ``visible=``) is
marked ``cacheScope: private``, as is one a hook may vary (a hook may say which kinds it
varies). With nothing of this in use, the methods skip it all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from snodo.core.context import Context
from snodo.stores.key_value import KeyValueStore

__all__ = ["Hook", "Item", "Kind", "Private", "Rule", "View", "Visibility", "Visible"]

Kind = Literal["tools", "resources", "templates", "prompts"]
"""The kinds of item a rule may select."""
KINDS: Final[tuple[Kind, ...]] = ("tools", "resources", "templates", "prompts")
LIST_KEYS: Final[Mapping[str, str]] = {
    "tools": "toolsListChanged",
    "resources": "resourcesListChanged",
    "templates": "resourcesListChanged",
    "prompts": "promptsListChanged",
}
"""The listen filter key a change of each kind concerns."""

Visible = Callable[[Context], bool]
"""``visible=``: whether the request's caller may see the item."""

Hook = Callable[[Context, "Kind", str], bool]
"""A rule of its own (an extension's): whether the item ``key`` of the kind is hidden
from the request's caller."""

Private = Callable[["Kind"], bool]
"""A hook's word on whether it may now hide an item of the kind from some callers and
not others: the lists of that kind are then each caller's own."""

SPACE: Final = "visibility"
"""The store space of the callers' own rules, each under its caller's key."""
MAX_CALLER_RULES: Final = 64
"""Rules one caller keeps; beyond it the oldest go first."""


@dataclass(frozen=True, slots=True)
class Item:
    """What a predicate given to ``server.enable``/``server.disable`` reads of an item."""

    kind: Kind
    key: str
    """Its name (a tool, a prompt), URI (a resource) or URI template."""
    tags: frozenset[str]


@dataclass(frozen=True, slots=True)
class Marks:
    """What registration said of an item's visibility."""

    tags: frozenset[str] = frozenset()
    enabled: bool = True
    visible: Visible | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """Show (``enable``) or hide the items of ``kinds`` (None: every kind) that have one
    of ``names`` or ``tags``, or that ``test`` accepts (server rules only)."""

    enable: bool
    names: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    kinds: frozenset[str] | None = None
    test: Callable[[Item], bool] | None = None

    @classmethod
    def of(
        cls,
        enable: bool,
        names: str | Iterable[str] = (),
        tags: str | Iterable[str] = (),
        kinds: Iterable[str] | None = None,
        test: Callable[[Item], bool] | None = None,
    ) -> Rule:
        """A rule from what a caller writes; ValueError for one that selects nothing."""
        named = frozenset([names] if isinstance(names, str) else names)
        tagged = frozenset([tags] if isinstance(tags, str) else tags)
        chosen = None if kinds is None else frozenset(kinds)
        if chosen is not None and not chosen <= set(KINDS):
            raise ValueError(f"kinds are among {', '.join(KINDS)}")
        if not named and not tagged and test is None:
            raise ValueError("say which items: names, tags or a predicate")
        return cls(enable, named, tagged, chosen, test)

    def matches(self, item: Item) -> bool:
        """Whether the rule selects ``item``."""
        if self.kinds is not None and item.kind not in self.kinds:
            return False
        if self.test is not None:
            return self.test(item)
        return item.key in self.names or not self.tags.isdisjoint(item.tags)

    def concerns(self) -> set[str]:
        """The listen filter keys a change by this rule may concern."""
        return {LIST_KEYS[kind] for kind in (self.kinds or KINDS)}

    def to_json(self) -> dict[str, Any]:
        """The rule as a caller's rules are kept (a predicate is never kept)."""
        body: dict[str, Any] = {"e": self.enable, "n": sorted(self.names), "t": sorted(self.tags)}
        if self.kinds is not None:
            body["k"] = sorted(self.kinds)
        return body

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Rule:
        """The rule ``to_json`` wrote."""
        kinds = body.get("k")
        return cls(
            bool(body["e"]),
            frozenset(body.get("n") or ()),
            frozenset(body.get("t") or ()),
            None if kinds is None else frozenset(kinds),
        )


class View:
    """One request's view: what hides an item from this caller."""

    __slots__ = ("_rules", "_visibility", "by_caller", "ctx")

    def __init__(self, visibility: Visibility, ctx: Context, caller_rules: list[Rule]) -> None:
        self._visibility = visibility
        self._rules = [*visibility.rules, *caller_rules]
        self.ctx = ctx
        self.by_caller = bool(caller_rules) or visibility.by_caller
        """Whether what this caller sees may differ from what another does, hooks aside."""

    def private(self, kind: Kind) -> bool:
        """Whether this caller's list of ``kind`` may differ from another's."""
        if self.by_caller:
            return True
        return any(private(kind) for private in self._visibility.hook_privacy)

    def hides(self, kind: Kind, key: str) -> bool:
        """Whether the item ``key`` of ``kind`` is hidden from this caller."""
        marks = self._visibility.marks.get((kind, key)) or _UNMARKED
        shown = marks.enabled
        if self._rules:
            item = Item(kind, key, marks.tags)
            for rule in self._rules:
                if rule.matches(item):
                    shown = rule.enable
        if shown and marks.visible is not None:
            shown = bool(marks.visible(self.ctx))
        if shown:
            ctx = self.ctx
            shown = not any(hook(ctx, kind, key) for hook in self._visibility.hooks)
        return not shown


_UNMARKED: Final = Marks()


class Visibility:
    """A server's visibility: each item's marks, the server's rules, and where the
    callers' own rules are kept. ``store`` and ``changed`` are set by the server."""

    def __init__(self) -> None:
        self.marks: dict[tuple[Kind, str], Marks] = {}
        self.rules: list[Rule] = []
        self.store: KeyValueStore | None = None
        self.ttl: float = 24 * 3600.0
        self.changed: Callable[[str], object] = _unheard
        """Told the listen filter key of each list a change concerns."""
        self.by_caller = False
        """Some item's ``visible=`` reads the caller."""
        self.callers = False
        """Callers' own rules may exist (one was written here, or the store is shared)."""
        self._disabled: set[tuple[Kind, str]] = set()
        """The items registered with ``enabled=False``."""
        self.hooks: list[Hook] = []
        """The rules of their own that extensions add (``add_hook``)."""
        self.hook_privacy: list[Private] = []
        """Whether each hook may now vary a kind's lists by caller."""
        self.active = False
        """Whether anything may hide anything: else the methods skip visibility. Kept
        as each change is made, since every call and read asks it."""

    def _recount(self) -> None:
        self.active = bool(
            self.rules or self._disabled or self.hooks or self.by_caller or self.callers
        )

    def keep_in(self, store: KeyValueStore, ttl: float) -> None:
        """Keep the callers' own rules in ``store``; one shared with other workers may
        hold some already, so every request then reads its caller's."""
        self.store, self.ttl = store, ttl
        self.callers = self.callers or store.shared
        self._recount()

    # -- registration ----------------------------------------------------------------------

    def mark(self, kind: Kind, key: str, options: Mapping[str, Any]) -> None:
        """Record an item's ``tags``, ``enabled`` and ``visible`` options."""
        tags, enabled, visible = (options.get(k) for k in ("tags", "enabled", "visible"))
        if tags is None and enabled is None and visible is None:
            self.forget(kind, key)
            return
        if visible is not None and not callable(visible):
            raise TypeError("visible= takes a function of the Context that answers a bool")
        named = frozenset([tags] if isinstance(tags, str) else tags or ())
        self.marks[(kind, key)] = Marks(named, enabled is not False, visible)
        if enabled is False:
            self._disabled.add((kind, key))
        else:
            self._disabled.discard((kind, key))
        self.by_caller = self.by_caller or visible is not None
        self._recount()

    def tags(self, kind: Kind, key: str) -> frozenset[str]:
        """The item's tags."""
        marks = self.marks.get((kind, key))
        return marks.tags if marks is not None else frozenset()

    def forget(self, kind: Kind, key: str) -> None:
        """Drop what registration said of an item no longer registered."""
        self.marks.pop((kind, key), None)
        self._disabled.discard((kind, key))
        self._recount()

    def add_hook(self, hook: Hook, private: Private | None = None) -> None:
        """Hide from a caller whatever ``hook(ctx, kind, key)`` says is hidden, in every
        method as the other rules. Lists become the caller's own (``private``): those of
        every kind, or of the kinds for which ``private(kind)`` is true when listed."""
        self.hooks.append(hook)
        self.hook_privacy.append(private if private is not None else _always)
        self._recount()

    # -- changes -------------------------------------------------------------------------

    def server_rule(self, rule: Rule) -> None:
        """Apply ``rule`` server-wide from now on, and tell the listeners."""
        self.rules.append(rule)
        self._recount()
        for key in sorted(rule.concerns()):
            self.changed(key)

    async def caller_rule(self, caller: str, rule: Rule | None) -> None:
        """Add ``rule`` to the caller's own (None: forget them all), and tell."""
        store = self._store()
        if rule is None:
            await store.delete(SPACE, caller)
            concerned: set[str] = set(LIST_KEYS.values())
        else:
            kept = await self._caller_rules(caller)
            kept = [*kept, rule][-MAX_CALLER_RULES:]
            body = json.dumps([r.to_json() for r in kept], separators=(",", ":")).encode()
            await store.put(SPACE, caller, body, self.ttl)
            concerned = rule.concerns()
        self.callers = True
        self._recount()
        for key in sorted(concerned):
            self.changed(key)

    def _store(self) -> KeyValueStore:
        if self.store is None:
            raise RuntimeError("this server keeps no callers' rules (it has no store)")
        return self.store

    async def _caller_rules(self, caller: str) -> list[Rule]:
        raw = await self._store().get(SPACE, caller)
        if raw is None:
            return []
        try:
            return [Rule.from_json(body) for body in json.loads(raw)]
        except (ValueError, KeyError, TypeError):  # not ours: as if none
            return []

    async def view(self, ctx: Context, caller: str | None) -> View | None:
        """This request's view, or None when nothing hides anything."""
        if not self.active:
            return None
        rules = await self._caller_rules(caller) if self.callers and caller is not None else []
        return View(self, ctx, rules)


def _always(kind: Kind) -> bool:
    """The default ``private`` of a hook: it may vary every list."""
    return True


def _unheard(key: str) -> None:
    """The default ``changed``: nobody listens."""
