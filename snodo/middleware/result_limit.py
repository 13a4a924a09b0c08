"""``ResultLimit``: a tool's result or a resource's contents cut to a size, saying so.

A ``tools/call`` result larger than ``max_bytes`` (as JSON, UTF-8) becomes one text
block: the text of its text blocks (else the result's JSON), cut at a character
boundary so the whole fits, then the ``marker`` naming both sizes. A result that had
``structuredContent`` is marked ``isError`` then: the cut cannot fit its output schema
(SEP-3279's ``outputs``: each content output cut, the structured ones left out).
A ``resources/read`` keeps its contents in order while they fit; the first that does not
is cut (text) or replaced (a blob) by a text content with the marker, and the rest
left out. With ``tools`` only those tools' results are limited. Everything else passes
as it is.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final

from snodo.core.context import Context
from snodo.core.errors import InternalError
from snodo.core.types import CallNext

__all__ = ["MARKER", "ResultLimit"]

log = logging.getLogger("snodo.middleware")

MARKER: Final = "[truncated: the result was {size} bytes; this server gives at most {limit}]"
_ROOM: Final = 128
"""Bytes kept for what wraps the cut text (the block, the result, the marker's numbers)."""


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def _cut(text: str, room: int) -> str:
    """``text`` cut to at most ``room`` bytes of UTF-8, at a character boundary."""
    encoded = text.encode()
    if len(encoded) <= room:
        return text
    return encoded[: max(0, room)].decode(errors="ignore")


class ResultLimit:
    """Results past ``max_bytes`` cut, with ``marker`` (``{size}``, ``{limit}``)."""

    def __init__(
        self, max_bytes: int, *, tools: Iterable[str] | None = None, marker: str = MARKER
    ) -> None:
        if max_bytes < 2 * _ROOM + len(marker):
            raise ValueError(f"max_bytes is at least {2 * _ROOM + len(marker)}")
        self.max_bytes = max_bytes
        self.tools = None if tools is None else frozenset(tools)
        self.marker = marker
        self.cut = 0
        """Results cut so far."""

    async def __call__(self, ctx: Context, call_next: CallNext) -> Any:
        outcome = await call_next(ctx)
        method = ctx.request_method
        if not isinstance(outcome, dict) or method not in ("tools/call", "resources/read"):
            return outcome
        tools = self.tools
        if (
            method == "tools/call"
            and tools is not None
            and ctx.request_params.get("name") not in tools
        ):
            return outcome
        size = _size(outcome)
        if size <= self.max_bytes:
            return outcome
        self.cut += 1
        log.info("%s: a result of %d bytes cut to %d", method, size, self.max_bytes)
        marker = self.marker.format(size=size, limit=self.max_bytes)
        if method == "tools/call":
            return self._tool_result(outcome, marker)
        return self._contents(outcome, marker)

    def _tool_result(self, result: Mapping[str, Any], marker: str) -> dict[str, Any]:
        if isinstance(result.get("outputs"), list):
            return self._outputs(result, result["outputs"], marker)
        blocks = result.get("content")
        texts = [
            block["text"]
            for block in (blocks if isinstance(blocks, list) else ())
            if isinstance(block, Mapping) and block.get("type") == "text"
        ]
        whole = "\n\n".join(str(text) for text in texts) if texts else json.dumps(result)
        room = self.max_bytes - len(marker.encode()) - _ROOM
        cut: dict[str, Any] = {
            "content": [{"type": "text", "text": f"{_cut(whole, room)}\n\n{marker}"}]
        }
        if result.get("isError") or "structuredContent" in result:
            cut["isError"] = True
        if "_meta" in result:
            cut["_meta"] = result["_meta"]
        return cut

    def _outputs(
        self, result: Mapping[str, Any], outputs: list[Any], marker: str
    ) -> dict[str, Any]:
        """SEP-3279's ``outputs``: each content output cut as a whole result is, sharing
        the room; a structured one cannot be cut, so it is left out and the result
        marked ``isError``; with no content output to cut, a protocol error."""
        said = [o for o in outputs if isinstance(o, Mapping) and o.get("format") == "content"]
        if not said:
            raise InternalError(f"the tool's result is too large: {marker}")
        share = (self.max_bytes - _ROOM) // len(said)
        kept = []
        for output in said:
            blocks = output.get("content")
            texts = [
                str(block["text"])
                for block in (blocks if isinstance(blocks, list) else ())
                if isinstance(block, Mapping) and block.get("type") == "text"
            ]
            whole = "\n\n".join(texts) if texts else json.dumps(output)
            room = max(share - len(marker.encode()) - _ROOM, 0)
            text = f"{_cut(whole, room)}\n\n{marker}"
            kept.append({**output, "content": [{"type": "text", "text": text}]})
        cut: dict[str, Any] = {"outputs": kept}
        if result.get("isError") or len(said) < len(outputs):
            cut["isError"] = True
        if "_meta" in result:
            cut["_meta"] = result["_meta"]
        return cut

    def _contents(self, result: Mapping[str, Any], marker: str) -> dict[str, Any]:
        contents = result.get("contents")
        kept: list[Any] = []
        room = self.max_bytes - len(marker.encode()) - _ROOM
        for content in contents if isinstance(contents, list) else ():
            size = _size(content)
            if size <= room - _size(kept):
                kept.append(content)
                continue
            left = room - _size(kept) - _ROOM
            uri = content.get("uri", "") if isinstance(content, Mapping) else ""
            if isinstance(content, Mapping) and isinstance(content.get("text"), str):
                text = f"{_cut(content['text'], left)}\n\n{marker}"
                kept.append({**content, "text": text})
            else:
                kept.append({"uri": uri, "mimeType": "text/plain", "text": marker})
            break
        cut = {key: value for key, value in result.items() if key != "contents"}
        cut["contents"] = kept
        return cut
