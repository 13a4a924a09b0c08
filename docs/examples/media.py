"""Images, audio, files and links from tools and resources: python media.py"""

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from snodo import Audio, Client, File, Image, Server, link
from snodo.client.transports import MemoryTransport

server = Server("media", "1.0.0")
HERE = Path(tempfile.mkdtemp())
(HERE / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(8))  # a PNG's first bytes
(HERE / "notes.md").write_text("# Notes\n", encoding="utf-8")


@server.tool
def chart() -> Image:
    """The type comes from the file name."""
    return Image(path=HERE / "chart.png")


@server.tool
def beep() -> Audio:
    """From bytes: the type comes from their first bytes, or mime_type=."""
    return Audio(b"RIFF\x24\x00\x00\x00WAVEfmt ")


@server.tool
def report() -> list[str | Image | File | dict[str, Any]]:
    """Text, an image, a file and a link, in one result."""
    return [
        "This week:",
        Image(path=HERE / "chart.png"),
        File(path=HERE / "notes.md"),
        link("notes://archive", "archive", mime_type="text/markdown"),
    ]


@server.resource("media://chart", name="chart")
def chart_resource() -> Image:
    """A resource may return one too."""
    return Image(path=HERE / "chart.png")


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        for name in ("chart", "beep", "report"):
            blocks = (await client.call_tool(name)).content
            print(name, [(b.type, getattr(b, "mime_type", None) or "") for b in blocks])
        read = (await client.read_resource("media://chart")).contents[0]
        print("media://chart", read.mime_type, len(read.blob), "base64 characters")


if __name__ == "__main__":
    asyncio.run(main())
