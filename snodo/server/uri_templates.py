"""URI templates for resources: RFC 6570 as far as resource URIs use it, matched in
reverse, with the values checked before a handler sees them.

Expressions, one variable each unless said:

- ``{var}``: simple expansion, one path segment (``/``, ``?`` and ``#`` stay outside);
- ``{+var}``: reserved expansion, may span ``/``;
- ``{#var}``: a fragment, optional;
- ``{/var}``: one path segment with its ``/``; ``{/var*}``: any number of them, a list;
- ``{.var}``: a label with its ``.``;
- ``{?a,b}``: form-style query parameters, in any order, each optional; parameters the
  template does not name are ignored.

Values are percent-decoded, then converted to the handler parameter's annotation:
``str``, ``int``, ``float``, ``bool`` (``true``/``false``, ``1``/``0``), a ``Literal``
of those, ``list[str]`` for an exploded ``{/var*}``, each possibly ``| None``. A value
that does not convert is -32602 naming the variable; a query parameter the URI leaves out
takes the parameter's default, and without one the URI does not match.

Paths are refused by default: a value that decodes to a path traversal (a ``..``
segment), an absolute path (``/...``, ``C:...``), or holds a backslash or a NUL byte
does not match, so the read is "resource not found", however it was encoded
(``..``, ``%2E%2E``, ``%2e%2e%2f``, ``..%5c``, ``%00``). A template whose values are
meant to be paths and whose handler confines them itself registers with
``allow_paths=True``.
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from snodo.core.errors import InvalidParams

__all__ = ["UriTemplate", "compile_template", "unsafe_path"]

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z0-9_]+")
_OPERATORS = frozenset({"", "+", "#", "/", ".", "?"})
_DRIVE = re.compile(r"^[A-Za-z]:")

Convert = Callable[[Any], Any]

_JOINS = {
    "": ("", ","),
    "+": ("", ","),
    "#": ("#", ","),
    "/": ("/", "/"),
    ".": (".", "."),
    "?": ("?", "&"),
}
"""What an expression's values begin with and are joined by, by operator (RFC 6570)."""
_RESERVED = ":/?#[]@!$&'()*+,;="
"""Left as they are by ``{+var}`` and ``{#var}``."""


def _text(value: Any, safe: str) -> str:
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return urllib.parse.quote(text, safe=safe)


@dataclass(frozen=True, slots=True)
class Variable:
    name: str
    operator: str
    explode: bool


@dataclass(frozen=True, slots=True)
class UriTemplate:
    """A compiled template: ``match`` gives a URI's converted values, or None."""

    text: str
    pattern: re.Pattern[str]
    variables: tuple[Variable, ...]
    query: tuple[str, ...]
    """The names of ``{?...}`` parameters."""
    convert: Mapping[str, Convert]
    required: frozenset[str]
    """Query parameters the handler has no default for."""
    allow_paths: bool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variables)

    def expand(self, values: Mapping[str, Any]) -> str:
        """The URI ``values`` make (RFC 6570 section 3.2, for the expressions above): each
        value percent-encoded as its operator says, a value left out (None) left out."""

        def expression(found: re.Match[str]) -> str:
            body = found.group(1)
            operator = body[:1] if body[:1] in _OPERATORS - {""} else ""
            prefix, separator = _JOINS[operator]
            safe = _RESERVED if operator in ("+", "#") else ""
            parts = []
            for spec in body[len(operator) :].split(","):
                value = values.get(spec.rstrip("*"))
                if value is None:
                    continue
                if isinstance(value, list | tuple):
                    parts.append(separator.join(_text(item, safe) for item in value))
                elif operator == "?":
                    parts.append(f"{spec}={_text(value, safe)}")
                else:
                    parts.append(_text(value, safe))
            return prefix + separator.join(parts) if parts else ""

        return _EXPRESSION.sub(expression, self.text)

    def match(self, uri: str) -> dict[str, Any] | None:
        """The converted values of ``uri``; None when it does not match, a required
        query value is left out, or a value is a path this template does not allow."""
        found = self.pattern.fullmatch(uri)
        if found is None:
            return None
        raw: dict[str, Any] = {}
        for variable in self.variables:
            if variable.operator == "?":
                continue
            text = found.group(variable.name)
            if text is None:  # an absent fragment
                continue
            if variable.explode:
                raw[variable.name] = [_decode(s) for s in text.split("/")[1:]]
            else:
                raw[variable.name] = _decode(text)
        if self.query:
            given = _query(found.group("_query") or "")
            for name in self.query:
                if name in given:
                    raw[name] = given[name]
                elif name in self.required:
                    return None
        if not self.allow_paths and any(unsafe_path(value) for value in raw.values()):
            return None
        values = {}
        for name, value in raw.items():
            try:
                values[name] = self.convert[name](value)
            except (TypeError, ValueError):
                raise InvalidParams(f"Invalid value for {name!r} in the resource URI") from None
        return values


def unsafe_path(value: str | list[str]) -> bool:
    """Whether a decoded value is, or holds, a path that could leave where it is used:
    a ``..`` segment, an absolute path, a backslash or a NUL byte."""
    if isinstance(value, list):
        return any(unsafe_path(item) or "/" in item for item in value)
    if "\x00" in value or "\\" in value:
        return True
    if value.startswith("/") or _DRIVE.match(value):
        return True
    return ".." in value.split("/")


def _decode(text: str) -> str:
    return urllib.parse.unquote(text, errors="strict")


def _query(text: str) -> dict[str, str]:
    """Form-style query parameters, percent-decoded (``+`` is a plus, as RFC 6570
    encodes a space as ``%20``); the first of a repeated name counts."""
    given: dict[str, str] = {}
    for pair in text.split("&"):
        if not pair:
            continue
        name, _, value = pair.partition("=")
        given.setdefault(_decode(name), _decode(value))
    return given


def compile_template(
    text: str,
    annotations: Mapping[str, Any],
    defaults: frozenset[str],
    *,
    allow_paths: bool = False,
) -> UriTemplate:
    """``text`` compiled; ``annotations`` are the handler's parameters by name (those it
    takes; a ``**kwargs`` handler takes every value as a string), ``defaults`` those with
    a default. ValueError for what this subset does not cover."""
    variables: list[Variable] = []
    regex: list[str] = []
    query: list[str] = []
    position = 0
    for found in _EXPRESSION.finditer(text):
        literal = text[position : found.start()]
        if "{" in literal or "}" in literal:
            raise ValueError(f"resource template {text!r}: unbalanced braces")
        regex.append(re.escape(literal))
        position = found.end()
        body = found.group(1)
        operator = body[:1] if body[:1] in _OPERATORS - {""} else ""
        names = body[len(operator) :].split(",")
        if operator == "?" and query:
            raise ValueError(f"resource template {text!r}: one {{?...}} expression at most")
        if operator != "?" and len(names) != 1:
            raise ValueError(
                f"resource template {text!r}: {{{body}}} names several variables;"
                " only a query ({?a,b}) may"
            )
        for spec in names:
            explode = spec.endswith("*")
            name = spec[:-1] if explode else spec
            if not _NAME.fullmatch(name):
                raise ValueError(f"resource template {text!r}: {{{body}}} is not supported")
            if explode and operator != "/":
                raise ValueError(
                    f"resource template {text!r}: only {{/var*}} may explode a variable"
                )
            variables.append(Variable(name, operator, explode))
            if operator == "?":
                query.append(name)
        regex.append(_piece(operator, names[0].rstrip("*"), names[0].endswith("*")))
        rest = text[position:]
        if operator == "?" and rest and not (rest.startswith("{#") and rest.endswith("}")):
            raise ValueError(f"resource template {text!r}: only a {{#...}} may follow a query")
    tail = text[position:]
    if "{" in tail or "}" in tail:
        raise ValueError(f"resource template {text!r}: unbalanced braces")
    regex.append(re.escape(tail))
    if not variables:
        raise ValueError(f"resource template {text!r} has no {{variable}}")
    all_names = [v.name for v in variables]
    if len(set(all_names)) != len(all_names):
        raise ValueError(f"resource template {text!r} repeats a variable")
    convert: dict[str, Convert] = {}
    for variable in variables:
        if variable.name in annotations:
            convert[variable.name] = converter(
                annotations[variable.name], variable.explode, f"{text!r}: {variable.name}"
            )
        else:
            convert[variable.name] = _identity
    required = frozenset(name for name in query if name in annotations and name not in defaults)
    return UriTemplate(
        text=text,
        pattern=re.compile("".join(regex)),
        variables=tuple(variables),
        query=tuple(query),
        convert=convert,
        required=required,
        allow_paths=allow_paths,
    )


def _piece(operator: str, name: str, explode: bool) -> str:
    if operator == "":
        return f"(?P<{name}>[^/?#]+)"
    if operator == "+":
        return f"(?P<{name}>[^?#]+)"
    if operator == "#":
        return f"(?:#(?P<{name}>.*))?"
    if operator == "/":
        return f"(?P<{name}>(?:/[^/?#]+)*)" if explode else f"/(?P<{name}>[^/?#]+)"
    if operator == ".":
        return rf"\.(?P<{name}>[^/?#.]+)"
    return r"(?:\?(?P<_query>[^#]*))?"  # "?"


def _identity(value: Any) -> Any:
    return value


def converter(annotation: Any, explode: bool, where: str) -> Convert:
    """How a decoded value becomes the annotated type; ValueError at registration for a
    type a URI value cannot be."""
    if isinstance(annotation, str):  # a string annotation its module could not resolve
        annotation = _NAMED.get(annotation, annotation)
    if annotation is Any or annotation is object:
        return _identity
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(annotation) if m is not type(None)]
        if len(members) == 1:
            return converter(members[0], explode, where)
        raise ValueError(f"resource template {where}: a union other than T | None")
    if explode:
        if typing.get_origin(annotation) is list and typing.get_args(annotation) in ((str,), ()):
            return list
        if annotation is list:
            return list
        raise ValueError(f"resource template {where}: an exploded variable is a list[str]")
    if annotation is str or annotation is inspect.Parameter.empty:
        return str
    if annotation is bool:
        return _boolean
    if annotation is int:
        return _integer
    if annotation is float:
        return _number
    if typing.get_origin(annotation) is Literal:
        return _literal(typing.get_args(annotation))
    raise ValueError(
        f"resource template {where}: a URI value cannot be a {annotation!r}"
        " (str, int, float, bool, a Literal of them, or list[str] for {/var*})"
    )


_NAMED: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool}


def _boolean(value: str) -> bool:
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise ValueError(value)


def _integer(value: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", value):
        raise ValueError(value)
    return int(value)


def _number(value: str) -> float:
    number = float(value)  # ValueError for what is not a number
    if not math.isfinite(number):
        raise ValueError(value)
    return number


def _literal(options: tuple[Any, ...]) -> Convert:
    def pick(value: str) -> Any:
        for option in options:
            if isinstance(option, bool):
                if value == ("true" if option else "false"):
                    return option
            elif str(option) == value:
                return option
        raise ValueError(value)

    return pick
