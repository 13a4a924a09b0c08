"""Who a server is, as every published document says it: one reading of its declarations.

The Server Card and the registry entry name a server ``NAMESPACE/NAME`` (reverse DNS,
one slash) and require a description of at most 100 characters; both carry the version,
title, icons, website and repository. They are read here once from the server's own
``Implementation`` (``Server(name, version, title=..., description=...)`` and its
``Publishing``'s website and icons), its ``card_name`` and its ``repository``, so the
documents cannot disagree about who it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from snodo.server import Server

__all__ = ["Identity", "PublishingError", "checked", "identity", "repository_of"]

NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
"""What both schemas require of a name (one slash, reverse DNS before it)."""
MAX_DESCRIPTION = 100
"""Both schemas' longest description."""
SOURCES = {"github.com": "github", "gitlab.com": "gitlab", "bitbucket.org": "bitbucket"}
"""A repository's hosting service, by host, as the schemas' ``source`` names it."""


class PublishingError(ValueError):
    """What a server declares cannot make the document asked for; the message says
    what to declare."""


@dataclass(frozen=True, slots=True)
class Identity:
    """The members the Server Card and the registry entry share."""

    name: str
    version: str
    description: str
    title: str | None
    website_url: str | None
    icons: tuple[Mapping[str, Any], ...]
    repository: Mapping[str, str] | None

    def members(self) -> dict[str, Any]:
        """As both documents spell them (camelCase), absent ones left out."""
        out: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "description": self.description,
        }
        if self.title:
            out["title"] = self.title
        if self.website_url:
            out["websiteUrl"] = self.website_url
        if self.icons:
            out["icons"] = [dict(icon) for icon in self.icons]
        if self.repository:
            out["repository"] = dict(self.repository)
        return out


def repository_of(url: str) -> dict[str, str]:
    """``{"url", "source"}`` for a repository URL; the source is its host's service
    (``github``), else the host itself."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PublishingError(f"the repository is a URL (https://...), not {url!r}")
    return {"url": url, "source": SOURCES.get(parts.hostname, parts.hostname)}


def describe(server: Server) -> str:
    """The server's description, else its instructions' first line: at most 100
    characters either way."""
    info = server.info
    text = str(info.get("description") or "").strip()
    if not text:
        text = (server.instructions or "").strip().split("\n", 1)[0].strip()
    if not text:
        raise PublishingError(
            "the server has no description: give it one, Server(..., description=...) "
            f"(at most {MAX_DESCRIPTION} characters)"
        )
    if len(text) > MAX_DESCRIPTION:
        raise PublishingError(
            f"the server's description has {len(text)} characters; a Server Card and a "
            f"registry entry take at most {MAX_DESCRIPTION}: shorten it"
        )
    return text


def identity(server: Server, name: str | None = None) -> Identity:
    """The server's identity under ``name`` (else its ``card_name``)."""
    chosen = name or server.card_name
    if not chosen:
        raise PublishingError(
            "a published server is named NAMESPACE/NAME (--name, or"
            " Server(publishing=Publishing(card_name=...)))"
        )
    if not NAME.fullmatch(chosen) or not 3 <= len(chosen) <= 200:
        raise PublishingError(
            f"{chosen!r} is not NAMESPACE/NAME: reverse DNS, one slash, letters, digits, "
            "'.', '-' (and '_' after the slash), such as io.github.user/weather"
        )
    info = server.info
    return Identity(
        name=chosen,
        version=str(info["version"]),
        description=describe(server),
        title=info.get("title"),
        website_url=info.get("websiteUrl"),
        icons=tuple(info.get("icons") or ()),
        repository=repository_of(server.repository) if server.repository else None,
    )


def checked(model: type[BaseModel], document: dict[str, Any], what: str) -> dict[str, Any]:
    """``document`` as ``model`` validates and dumps it; ``PublishingError`` naming the
    first member it refuses otherwise."""
    try:
        valid = model.model_validate(document)
    except ValidationError as exc:
        found = exc.errors()[0]
        where = ".".join(str(part) for part in found["loc"])
        raise PublishingError(f"{what} would not be valid: {where}: {found['msg']}") from None
    dumped: dict[str, Any] = _ordered(valid.model_dump(mode="json"), document)
    return dumped


def _ordered(value: Any, like: Any) -> Any:
    """``value`` with its members in the order ``like`` (what was written) has them: the
    models dump them alphabetically, a reader expects the name first."""
    if isinstance(value, dict) and isinstance(like, Mapping):
        keys = [k for k in like if k in value] + [k for k in value if k not in like]
        return {k: _ordered(value[k], like.get(k)) for k in keys}
    if isinstance(value, list) and isinstance(like, list) and len(value) == len(like):
        return [_ordered(item, same) for item, same in zip(value, like, strict=True)]
    return value
