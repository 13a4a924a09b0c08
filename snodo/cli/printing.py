"""How ``snodo call`` shows what comes back on the terminal: a result as a person reads
it (text as text, the rest summarised) on stdout; progress and log messages on stderr,
so that stdout stays the result alone."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["show_log", "show_progress", "show_result"]


def show_result(raw: Mapping[str, Any]) -> None:
    """A result as a person reads it: text as text, the rest summarised."""
    for block in raw.get("content", []):
        _block(block)
    for contents in raw.get("contents", []):
        if "text" in contents:
            print(contents["text"])
        else:
            size = len(contents.get("blob", "")) * 3 // 4
            print(f"[{contents.get('mimeType', 'binary')}, about {size} bytes: {contents['uri']}]")
    for message in raw.get("messages", []):
        print(f"[{message['role']}] ", end="")
        _block(message["content"])
    if "structuredContent" in raw and not raw.get("content"):
        print(json.dumps(raw["structuredContent"], indent=2, ensure_ascii=False))
    if raw.get("isError"):
        print("snodo: the tool reported an error", file=sys.stderr)


def _block(block: Mapping[str, Any]) -> None:
    kind = block.get("type")
    if kind == "text":
        print(block["text"])
    elif kind in ("image", "audio"):
        print(
            f"[{kind} {block.get('mimeType')}, about {len(block.get('data', '')) * 3 // 4} bytes]"
        )
    elif kind == "resource_link":
        print(f"[link {block.get('uri')}]")
    elif kind == "resource":
        resource = block.get("resource") or {}
        print(resource.get("text", f"[resource {resource.get('uri')}]"))
    else:
        print(json.dumps(block, ensure_ascii=False))


def show_progress(progress: float, total: float | None, message: str | None) -> None:
    done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
    print(f"\r  progress {done}{f' {message}' if message else ''}", end="", file=sys.stderr)


def show_log(params: Mapping[str, Any]) -> None:
    logger = f" {params['logger']}:" if params.get("logger") else ""
    data = params.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    print(f"[{params.get('level')}]{logger} {text}", file=sys.stderr)
