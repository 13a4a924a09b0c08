"""What the user of a server configures: its settings, declared as a pydantic model.

``Server(settings=Settings)`` names a model whose fields are environment variables: a
field ``api_key`` is ``API_KEY`` (a field's alias names another). ``server.read_settings()``
reads them, checked by the model, and says in one line which are missing or wrong. The
declaration is what a bundle's ``user_config`` and a registry entry's environment
variables are written from (``snodo.publishing``): a field's ``title`` and
``description``, whether it has a default, and its type (``str``, ``int``/``float``,
``bool``, ``pathlib.Path``; ``SecretStr`` for a secret).
"""

from __future__ import annotations

import os
import pathlib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, SecretStr, ValidationError

__all__ = ["Setting", "SettingsError", "declared", "read"]

Kind = Literal["string", "number", "boolean", "file", "directory"]
M = TypeVar("M", bound=BaseModel)


class SettingsError(ValueError):
    """A setting is missing or not of its type."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: the environment variable, and what a host asks the user."""

    field: str
    variable: str
    title: str
    description: str
    kind: Kind
    required: bool
    default: str | int | float | bool | None
    secret: bool


def _options(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(a for a in typing.get_args(annotation) if a is not type(None))
    return (annotation,)


def _kind(name: str, annotation: Any) -> tuple[Kind, bool]:
    options = _options(annotation)
    if len(options) != 1:
        raise TypeError(f"setting {name}: one type, not {annotation!r}")
    (kind,) = options
    if kind is SecretStr:
        return "string", True
    if kind is bool:
        return "boolean", False
    if kind in (int, float):
        return "number", False
    if isinstance(kind, type) and issubclass(kind, pathlib.PurePath):
        return "file", False
    if kind is str:
        return "string", False
    raise TypeError(f"setting {name}: str, int, float, bool, Path or SecretStr, not {kind!r}")


def declared(model: type[BaseModel]) -> tuple[Setting, ...]:
    """The settings ``model`` declares, in field order."""
    found = []
    for name, info in model.model_fields.items():
        kind, secret = _kind(name, info.annotation)
        default = None if info.is_required() else info.default
        if isinstance(default, SecretStr | pathlib.PurePath):
            default = str(default.get_secret_value() if isinstance(default, SecretStr) else default)
        if default is not None and not isinstance(default, str | int | float | bool):
            raise TypeError(f"setting {name}: a default of {type(default).__name__}")
        found.append(
            Setting(
                field=name,
                variable=info.alias or name.upper(),
                title=info.title or name.replace("_", " ").capitalize(),
                description=info.description or "",
                kind=kind,
                required=info.is_required(),
                default=default,
                secret=secret,
            )
        )
    return tuple(found)


def read(model: type[M], environ: Mapping[str, str] | None = None) -> M:
    """The settings from the environment (``os.environ`` unless given), checked."""
    source = os.environ if environ is None else environ
    values = {
        setting.field: source[setting.variable]
        for setting in declared(model)
        if setting.variable in source
    }
    try:
        return model.model_validate(values, by_name=True)
    except ValidationError as exc:
        variables = {s.field: s.variable for s in declared(model)}
        problems = [
            f"{variables.get(str(error['loc'][0]), error['loc'][0])}: {error['msg'].lower()}"
            for error in exc.errors()
            if error["loc"]
        ]
        raise SettingsError(
            "the server's settings are not usable: " + "; ".join(problems)
        ) from None
