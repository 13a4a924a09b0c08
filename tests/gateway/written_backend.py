"""A 2026-07-28 server whose answers are written by hand, as bytes no JSON encoder of
snodo's would write: spaces inside values, ``1E2`` and ``2.50``, escaped and unescaped
non-ASCII text. What a proxy passes on as bytes comes out exactly so; what it decodes
and encodes again does not. Over HTTP, served by uvicorn
(``uvicorn tests.gateway.written_backend:app``); over stdio, run as
``python -m tests.gateway.written_backend``.

Tools (each answer's large member is ``ROWS``, about 8 KB):

- ``report``: a complete result, ``content`` and ``structuredContent`` large;
- ``broken``: the same with a comma too many inside ``content``;
- ``not-utf8``: the same with a byte that is not UTF-8 inside a string;
- ``nan``: the same with ``NaN`` inside ``structuredContent``;
- ``duplicate``: ``report`` with ``content``'s fourth block naming ``text`` twice
  (``HIDDEN`` first, the row's own text last);
- ``ask``: an ``input_required`` result whose question is large.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

_ROW = b'{"type": "text", "text": "row %d \\u00e9 \xc3\xa9"}'
ROWS = b"[" + b" , ".join(_ROW % i for i in range(200)) + b"]"
"""``content``: spaced, one accent escaped and one written out (UTF-8)."""
STRUCTURED = b'{"sizes": [1E2, 2.50, null, -0.0], "rows": ' + ROWS + b"}"
INFO = b'{"io.modelcontextprotocol/serverInfo":{"name":"written","version":"1.0.0"}}'
HIDDEN = b"what another parser would read"
DUPLICATED = ROWS.replace(b'"text": "row 3 ', b'"text": "%s", "text": "row 3 ' % HIDDEN, 1)

_ANSWERS = {
    "report": b'{"resultType":"complete","content":%s,"structuredContent":%s,'
    b'"isError":false,"_meta":%s}' % (ROWS, STRUCTURED, INFO),
    "broken": b'{"resultType":"complete","content":%s,"_meta":%s}'
    % (ROWS.replace(b" , ", b" ,, ", 1), INFO),
    "not-utf8": b'{"resultType":"complete","content":%s,"_meta":%s}'
    % (ROWS.replace(b"row 7", b"row \xff7", 1), INFO),
    "nan": b'{"resultType":"complete","content":%s,'
    b'"structuredContent":{"sizes":[NaN],"rows":%s},"_meta":%s}' % (ROWS, ROWS, INFO),
    "duplicate": b'{"resultType":"complete","content":%s,"structuredContent":%s,'
    b'"isError":false,"_meta":%s}' % (DUPLICATED, STRUCTURED, INFO),
    "ask": b'{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create",'
    b'"params":{"mode":"form","message":"%s","requestedSchema":{"type":"object","properties":'
    b'{"ok":{"type":"boolean"}}}}}},"requestState":"s-1","_meta":%s}' % (b"m" * 5000, INFO),
}
TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}}
    for name in ("report", "broken", "not-utf8", "nan", "duplicate", "ask")
]

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    if scope["method"] != "POST":
        await _answer(send, 405, b"")
        return
    message = json.loads(body)
    if "id" not in message:
        await _answer(send, 202, b"")
        return
    await _answer(send, 200, _response(message))


def _response(message: dict[str, Any]) -> bytes:
    method = message["method"]
    if method == "server/discover":
        result = json.dumps(
            {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "written", "version": "1.0.0"},
            }
        ).encode()
    elif method == "tools/list":
        result = json.dumps({"resultType": "complete", "tools": TOOLS}).encode()
    elif method == "tools/call":
        result = _ANSWERS[message["params"]["name"]]
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode()
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(message["id"]).encode(), result)


async def _answer(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    """Over stdio: a message a line in, an answer a line out."""
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" in message and "method" in message:
            sys.stdout.buffer.write(_response(message) + b"\n")
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
