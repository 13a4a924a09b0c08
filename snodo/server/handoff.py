"""What a tool returns for an extension to take, instead of its output.

A tool's handler may end with a value no tool result is made of: the tasks extension's
``background(work)``, say. Its type subclasses ``Handoff``, so the server knows it for
what it is without knowing the extension: a return annotation that names it has no
output schema for it, and an extension's ``calls.after`` hook takes it. One that reaches
the server's result untaken (no extension offered that takes it) is the server's
internal error, logged, never a result made of it.
"""

from __future__ import annotations

__all__ = ["Handoff"]


class Handoff:
    """Base of the values a tool returns for an extension to take (``calls.after``)."""

    __slots__ = ()
