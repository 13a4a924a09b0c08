"""``python -m generator upstream [--source URL]``: each pin against what upstream
publishes now, definition by definition.

Where a pin's file is published (its ``url``) says where to look for the current one:
a GitHub raw URL at a commit is read again at ``main``, an npm file at a version is read
at the latest version, any other URL is read as it is. ``--source URL`` reads every file
from one place laid out like ``schema/`` instead (``URL/REVISION/schema.json``, and
``URL/draft/schema.json``), a mirror or a test server. The draft, where one is
published beside the core revisions, is compared with the newest core pin.

A pin whose schema the project translated from a specification's text (``translated``)
has nothing to compare mechanically and says so in one line.

Exit status 1 when anything differs, so a scheduled job can open an issue or a pull
request from the output.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.revisions import Revision
from generator.schemadiff import diff_definitions
from generator.source import SchemaSourceError, locate_schema, sha256_of

_GITHUB_RAW = re.compile(r"^(https://raw\.githubusercontent\.com/[^/]+/[^/]+/)([0-9a-f]{40})/(.*)$")
_NPM = re.compile(r"^(https://unpkg\.com/(?:@[^/]+/)?[^@/]+)@[^/]+(/.*)$")


@dataclass(frozen=True, slots=True)
class Drift:
    lines: tuple[str, ...]
    drifted: bool


def current_url(pin_url: str, revision: str, source: str | None) -> str:
    """Where the current version of a pinned file is published."""
    if source is not None:
        return f"{source.rstrip('/')}/{revision}/schema.json"
    if match := _GITHUB_RAW.match(pin_url):
        return f"{match.group(1)}main/{match.group(3)}"
    if match := _NPM.match(pin_url):
        return f"{match.group(1)}{match.group(2)}"
    return pin_url


def draft_url(newest: Revision, source: str | None) -> str | None:
    """The draft schema beside the newest core revision, where upstream keeps one."""
    if source is not None:
        return f"{source.rstrip('/')}/draft/schema.json"
    current = current_url(newest.pin.url, newest.pin.revision, None)
    marker = f"/schema/{newest.pin.revision}/schema.json"
    return current.replace(marker, "/schema/draft/schema.json") if marker in current else None


def _fetch(url: str) -> bytes | None:
    """The file at ``url``; None when it is not there (404)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            data: bytes = response.read()
            return data
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise SchemaSourceError(f"{url}: HTTP {exc.code}") from exc
    except OSError as exc:
        raise SchemaSourceError(f"could not fetch {url}: {exc}") from exc


def _compare(label: str, pinned: Any, data: bytes, url: str) -> list[str]:
    found = diff_definitions(pinned, json.loads(data))
    if found.empty:
        return [f"{label}: {url} differs from the pin in bytes only (same definitions)"]
    return [f"{label}: {url} differs from the pin"] + [f"  {line}" for line in found.lines()]


def upstream(found: tuple[Revision, ...], source: str | None, schema: Path | None) -> Drift:
    lines: list[str] = []
    drifted = False
    for revision in found:
        if revision.pin.translated:  # no JSON schema upstream: its types are read by hand
            lines.append(
                f"{revision.pin.revision}: translated from {revision.pin.repository} "
                f"{revision.pin.path} at {revision.pin.commit}; compare that text by hand"
            )
            continue
        url = current_url(revision.pin.url, revision.pin.revision, source)
        data = _fetch(url)
        label = revision.pin.revision
        if data is None:
            lines.append(f"{label}: not published at {url}")
            continue
        if sha256_of(data) == revision.pin.sha256:
            lines.append(f"{label}: unchanged upstream ({url})")
            continue
        drifted = True
        pinned = json.loads(locate_schema(revision.pin, schema)[1])
        lines += _compare(label, pinned, data, url)
    cores = [r for r in found if r.overlay.extension is None and r.overlay.document is None]
    newest = cores[0] if cores else None
    where = draft_url(newest, source) if newest is not None else None
    if newest is not None and where is not None:
        data = _fetch(where)
        if data is None:
            lines.append(f"draft: not published at {where}")
        else:
            pinned = json.loads(locate_schema(newest.pin, schema)[1])
            found_diff = diff_definitions(pinned, json.loads(data))
            lines.append(f"draft ({where}) against {newest.pin.revision}:")
            lines += [f"  {line}" for line in found_diff.lines()] or ["  no difference"]
    return Drift(lines=tuple(lines), drifted=drifted)
