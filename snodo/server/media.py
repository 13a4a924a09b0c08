"""Images, audio and files a tool or a resource returns, from bytes or a path.

``Image``, ``Audio`` and ``File`` are also importable from ``snodo``.

``Image(path="chart.png")``, ``Audio(data, mime_type="audio/wav")``, ``File(path=
"report.pdf")``: each reads the file when made (so a missing file fails in the handler,
not on the wire), takes the MIME type given or guesses it (from the file name, else
from the first bytes of a common image or audio format), and checks it: an image is
``image/*`` and audio ``audio/*`` (server/tools.mdx, "Tool Result"). A tool may return
one, or a list mixing them with text and other content blocks; ``link(...)`` is a
resource link. A resource may return an ``Image``, ``Audio`` or ``File`` as its
contents.

On the wire an image is an ``ImageContent``, audio an ``AudioContent`` (base64
``data``), and a file an ``EmbeddedResource``: text (``text/*``, JSON, XML that decodes
as UTF-8) as ``text``, anything else base64 as ``blob``, under ``uri`` (by default
``file:///`` and the file's name).
"""

from __future__ import annotations

import base64
import mimetypes
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["Audio", "File", "Image", "Media", "link"]

_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"WAVE", 8, "audio/wav"),
    (b"ID3", 0, "audio/mpeg"),
    (b"OggS", 0, "audio/ogg"),
    (b"fLaC", 0, "audio/flac"),
    (b"%PDF-", 0, "application/pdf"),
)
_TEXTUAL = ("application/json", "application/xml", "application/yaml")


def _sniffed(data: bytes) -> str | None:
    for signature, offset, mime in _SIGNATURES:
        if data[offset : offset + len(signature)] == signature:
            if signature == b"WEBP" and not data.startswith(b"RIFF"):
                continue
            if signature == b"WAVE" and not data.startswith(b"RIFF"):
                continue
            return mime
    return None


class Media:
    """Bytes with a MIME type; ``Image``, ``Audio`` and ``File`` say how they are sent."""

    __snodo_content__ = True
    """Content, not structured output (``snodo.server.outputs``)."""
    family: str | None = None
    """The MIME type's required top-level type, if any."""

    __slots__ = ("data", "mime_type", "name")

    def __init__(
        self,
        data: bytes | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        mime_type: str | None = None,
    ) -> None:
        kind = type(self).__name__
        if (data is None) == (path is None):
            raise ValueError(f"{kind}: give the bytes or a path, not both or neither")
        name = None
        if path is not None:
            name = Path(path).name
            data = Path(path).read_bytes()
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"{kind}: data must be bytes")
        data = bytes(data)
        if mime_type is None:
            guessed = mimetypes.guess_type(name)[0] if name else None
            mime_type = guessed or _sniffed(data)
        if mime_type is None:
            if self.family is not None:
                raise ValueError(f"{kind}: cannot tell the type of these bytes; pass mime_type=")
            mime_type = "application/octet-stream"
        if "/" not in mime_type or mime_type.startswith("/") or mime_type.endswith("/"):
            raise ValueError(f"{kind}: {mime_type!r} is not a MIME type")
        if self.family is not None and mime_type.split("/", 1)[0] != self.family:
            raise ValueError(f"{kind}: {mime_type!r} is not an {self.family} type")
        self.data = data
        self.mime_type = mime_type
        self.name = name

    @property
    def base64(self) -> str:
        """The bytes, base64."""
        return base64.b64encode(self.data).decode("ascii")

    def block(self) -> dict[str, Any]:
        """The content block a tool result carries."""
        raise NotImplementedError

    def contents(self, uri: str) -> dict[str, Any]:
        """The contents of a resource read at ``uri``."""
        return {"uri": uri, "mimeType": self.mime_type, "blob": self.base64}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.mime_type}, {len(self.data)} bytes)"


class Image(Media):
    """An image: ``ImageContent`` in a tool result."""

    __slots__ = ()
    family = "image"

    def block(self) -> dict[str, Any]:
        """An ``ImageContent`` block."""
        return {"type": "image", "data": self.base64, "mimeType": self.mime_type}


class Audio(Media):
    """Audio: ``AudioContent`` in a tool result."""

    __slots__ = ()
    family = "audio"

    def block(self) -> dict[str, Any]:
        """An ``AudioContent`` block."""
        return {"type": "audio", "data": self.base64, "mimeType": self.mime_type}


class File(Media):
    """A file: an ``EmbeddedResource`` in a tool result, under ``uri``."""

    __slots__ = ("uri",)

    def __init__(
        self,
        data: bytes | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        mime_type: str | None = None,
        name: str | None = None,
        uri: str | None = None,
    ) -> None:
        super().__init__(data, path=path, mime_type=mime_type)
        if name is not None:
            self.name = name
            if mime_type is None and path is None:
                self.mime_type = mimetypes.guess_type(name)[0] or self.mime_type
        if uri is None:
            if not self.name:
                raise ValueError("File: bytes need a name= or a uri=")
            uri = "file:///" + quote(self.name)
        self.uri = uri

    def text(self) -> str | None:
        """The file as text, when its type is textual and its bytes are UTF-8."""
        if not (self.mime_type.startswith("text/") or self.mime_type in _TEXTUAL):
            return None
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def contents(self, uri: str) -> dict[str, Any]:
        """Text contents when the file is text, else blob contents."""
        text = self.text()
        if text is None:
            return super().contents(uri)
        return {"uri": uri, "mimeType": self.mime_type, "text": text}

    def block(self) -> dict[str, Any]:
        """An ``EmbeddedResource`` block under the file's ``uri``."""
        return {"type": "resource", "resource": self.contents(self.uri)}


def link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``ResourceLink`` content block: the client may read ``uri`` itself."""
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    for key, value in (
        ("title", title),
        ("description", description),
        ("mimeType", mime_type),
        ("size", size),
    ):
        if value is not None:
            block[key] = value
    block.update(extra or {})
    return block
