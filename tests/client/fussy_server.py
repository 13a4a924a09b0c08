"""A hand-written legacy stdio server that mishandles an early request, for tests.

    python tests/client/fussy_server.py exit|silent|late COUNTER_FILE

Before ``initialize`` it either exits on any other request (``exit``) or ignores it
(``silent``), as some legacy servers do. After, it serves one tool, ``echo``. ``late``
is a modern server slow to answer: ``server/discover`` after a second, ``initialize``
refused naming 2026-07-28, ``tools/list`` served. Each start
appends a line to COUNTER_FILE, and ``serverInfo.name`` says which start this is
("fussy 2" for the second), so a test can tell a restarted process.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

MODERN = "2026-07-28"
LATE_TOOLS = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public", "tools": []}


def main(manner: str, counter: Path) -> None:
    with counter.open("a") as log:
        log.write("start\n")
    generation = len(counter.read_text().splitlines())
    initialized = False
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue  # notifications
        if manner == "late":
            if method == "server/discover":
                time.sleep(1)
            refusal = {"code": -32600, "message": "modern only", "data": {"supported": [MODERN]}}
            reply = {"error": refusal} if method == "initialize" else {"result": LATE_TOOLS}
            print(json.dumps({"jsonrpc": "2.0", "id": ident, **reply}), flush=True)
            continue
        if method == "initialize":
            initialized = True
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": f"fussy {generation}", "version": "1"},
            }
        elif not initialized:
            if manner == "exit":
                sys.exit(3)
            continue
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        else:
            error = {"code": -32601, "message": f"no {method}"}
            print(json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
