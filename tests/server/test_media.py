"""Images, audio, files and resource links from tools and resources, on the wire; MIME
types from the argument, the file name or the first bytes, checked against the kind."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from snodo import Audio, File, Image, Server
from snodo.server.media import link
from snodo_wire import adapters
from tests.support.wire import answer, request

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
B64_PNG = base64.b64encode(PNG).decode()
B64_WAV = base64.b64encode(WAV).decode()


def server_with(tmp_path: Path) -> Server:
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(b"\x00\xff")
    server = Server("media", "1")

    @server.tool
    def chart() -> Image:
        return Image(path=tmp_path / "chart.png")

    @server.tool
    def sound() -> Audio:
        return Audio(WAV)

    @server.tool
    def report() -> list[str | Image | File]:
        return [
            "Here it is:",
            Image(PNG),
            File(path=tmp_path / "notes.md"),
            File(b"\x00\xff", name="data.bin"),
        ]

    @server.tool
    def pointer() -> dict[str, Any]:
        return link("notes://plans", "plans", mime_type="text/markdown", description="The plan")

    @server.resource("media://chart", name="chart")
    def chart_resource() -> Image:
        return Image(PNG)

    @server.resource("media://notes", name="notes")
    def notes_resource() -> File:
        return File(path=tmp_path / "notes.md")

    return server


def call(server: Server, name: str) -> dict[str, Any]:
    body = request("tools/call", {"name": name, "arguments": {}}, id=1)
    result: dict[str, Any] = answer(server, body)["result"]
    return result


def test_tools_return_media_as_content_blocks(tmp_path: Path) -> None:
    server = server_with(tmp_path)
    assert call(server, "chart")["content"] == [
        {"type": "image", "data": B64_PNG, "mimeType": "image/png"}
    ]
    assert call(server, "sound")["content"] == [
        {"type": "audio", "data": B64_WAV, "mimeType": "audio/wav"}
    ]
    report = call(server, "report")
    assert report["content"] == [
        {"type": "text", "text": "Here it is:"},
        {"type": "image", "data": B64_PNG, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {
                "uri": "file:///notes.md",
                "mimeType": "text/markdown",
                "text": "# Notes\n",
            },
        },
        {
            "type": "resource",
            "resource": {
                "uri": "file:///data.bin",
                "mimeType": "application/octet-stream",
                "blob": "AP8=",
            },
        },
    ]
    assert "structuredContent" not in report
    for block in report["content"]:
        adapters.content_block.validate_python(block)
    assert call(server, "pointer")["content"] == [
        {
            "type": "resource_link",
            "uri": "notes://plans",
            "name": "plans",
            "description": "The plan",
            "mimeType": "text/markdown",
        }
    ]
    tools = answer(server, request("tools/list", {}, id=2))["result"]["tools"]
    assert all("outputSchema" not in t for t in tools if t["name"] != "pointer")


def test_resources_return_media_as_contents(tmp_path: Path) -> None:
    server = server_with(tmp_path)
    read = answer(server, request("resources/read", {"uri": "media://chart"}, id=1))["result"]
    assert read["contents"] == [{"uri": "media://chart", "mimeType": "image/png", "blob": B64_PNG}]
    read = answer(server, request("resources/read", {"uri": "media://notes"}, id=2))["result"]
    assert read["contents"] == [
        {"uri": "media://notes", "mimeType": "text/markdown", "text": "# Notes\n"}
    ]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Image(b"not an image"), "Image: cannot tell the type of these bytes"),
        (lambda: Image(WAV), "Image: 'audio/wav' is not an image type"),
        (lambda: Audio(PNG, mime_type="image/png"), "Audio: 'image/png' is not an audio type"),
        (lambda: Image(PNG, mime_type="png"), "Image: 'png' is not a MIME type"),
        (Image, "Image: give the bytes or a path, not both or neither"),
        (lambda: File(b"x"), "File: bytes need a name= or a uri="),
    ],
)
def test_what_cannot_be_sent_is_refused_when_made(make: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        make()
    assert str(raised.value).startswith(message)


def test_a_missing_file_fails_when_made(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Image(path=tmp_path / "nope.png")


def test_the_type_comes_from_the_argument_then_the_name_then_the_bytes(tmp_path: Path) -> None:
    (tmp_path / "photo.jpg").write_bytes(PNG)
    assert Image(path=tmp_path / "photo.jpg").mime_type == "image/jpeg"  # the name wins
    assert Image(PNG, mime_type="image/x-custom").mime_type == "image/x-custom"
    assert Image(b"\xff\xd8\xff\xe0").mime_type == "image/jpeg"
    assert Audio(b"ID3\x04").mime_type == "audio/mpeg"
    assert File(b"{}", name="a.json").block()["resource"]["text"] == "{}"
