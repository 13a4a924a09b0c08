"""Input requests that were validated when they were built, and cannot change since.

``snodo.asking.elicitation``, ``snodo.asking.sampling`` and ``snodo.asking.roots`` check
every request they build against the pinned schema. They return a ``BuiltRequest``: a JSON
object, frozen all the way down (neither objects nor arrays can be changed), so what was
checked is what gets sent. Admission and the response readers trust a ``BuiltRequest``
instead of checking it again on every round; any other mapping is checked in full.

A question built and never asked: a handler that builds ``input_required(...)`` and
forgets to ``return`` it goes on as if the user had agreed. ``input_required`` gives
what it builds a ``Watch``; whatever sends the result on (admission, sealing) marks it
taken. A watch freed untaken (CPython frees it as soon as the handler lets go of it)
logs one warning naming the handler and the line that built it. Only a round that asks
pays for it, one small object: a plain request never meets it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Mapping
from types import CodeType
from typing import Any, NoReturn

__all__ = ["BuiltRequest", "FrozenArray", "FrozenObject", "Watch", "freeze"]

log = logging.getLogger("snodo")


def _immutable(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError("built input requests are immutable: build a new one instead")


class FrozenObject(dict[str, Any]):
    """A JSON object that refuses changes (json and pydantic read it as a dict)."""

    __slots__ = ("__weakref__",)

    __setitem__ = _immutable
    __delitem__ = _immutable
    __ior__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable
    setdefault = _immutable
    update = _immutable


class FrozenArray(list[Any]):
    """A JSON array that refuses changes."""

    __slots__ = ()

    __setitem__ = _immutable
    __delitem__ = _immutable
    __iadd__ = _immutable
    __imul__ = _immutable
    append = _immutable
    extend = _immutable
    insert = _immutable
    pop = _immutable
    remove = _immutable
    clear = _immutable
    sort = _immutable
    reverse = _immutable


class BuiltRequest(FrozenObject):
    """A bare input request as its builder checked it; ``checked`` is the builder's note."""

    __slots__ = ("checked", "digest", "needs", "written")

    def __init__(self, request: Mapping[str, Any], checked: Any = None) -> None:
        dict.__init__(self, {key: freeze(value) for key, value in request.items()})
        self.checked = checked
        self.needs: tuple[Any, ...] | None = None
        """The capability rules it needs, once ``snodo.core.capabilities`` has worked them out
        (they cannot change: neither can the request)."""
        self.written: Any = None
        """Its JSON text, once ``snodo.core.jsonrpc`` has written it with orjson (an
        ``orjson.Fragment``): a request sent on every round is written once."""
        self.digest: str | None = None
        """Its question digest, once ``snodo.core.input_responses`` has worked it out."""


def freeze(value: Any) -> Any:
    if isinstance(value, FrozenObject | FrozenArray):
        return value
    if isinstance(value, Mapping):
        return FrozenObject({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenArray(freeze(item) for item in value)
    return value


_BUILDER = os.path.join("snodo", "core", "result.py")


class Watch:
    """Where an ``InputRequired`` was built, and whether it was taken."""

    __slots__ = ("code", "line", "taken")

    def __init__(self) -> None:
        # Made by input_required: the frame above is the handler's, or (interpreted,
        # where input_required has a frame of its own; compiled, it has none) the one
        # above that.
        frame = sys._getframe(1)
        if frame.f_code.co_filename.endswith(_BUILDER) and frame.f_back is not None:
            frame = frame.f_back
        self.code: CodeType = frame.f_code
        self.line = frame.f_lineno
        self.taken = False

    def __del__(self) -> None:
        if self.taken:
            return
        with contextlib.suppress(Exception):  # interpreter shutdown: logging may be gone
            log.warning(
                "%s (%s, line %d) built input_required(...) and dropped it: the question"
                " was never asked; return it to ask",
                self.code.co_qualname,
                self.code.co_filename,
                self.line,
            )
