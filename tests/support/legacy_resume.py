"""A legacy client, in raw HTTP, that loses its POST stream mid-flow and resumes it.

It opens a session, calls ``weather`` (which asks a form question through the bridge),
reads the SSE answer up to the question, then hangs up. It answers the question with a
separate POST, as a client does, and resumes the lost stream with GET and
``Last-Event-ID``: what it missed must come, the call's answer last.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

VERSION = "2025-11-25"
ACCEPT = {"accept": "application/json, text/event-stream"}


def events(lines: Any) -> Any:
    """(id, message) of each SSE event with data; priming events give (id, None)."""
    event_id, data = None, []
    for line in lines:
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "":
            text = "\n".join(data).strip()
            if event_id is not None or text:
                yield event_id, (json.loads(text) if text else None)
            event_id, data = None, []


def lose_and_resume(url: str, pings: int = 0) -> dict[str, Any]:
    """The flow above, with ``pings`` pings before the resuming GET (to move it to
    another worker of a round-robin balancer); returns what it saw."""
    seen: dict[str, Any] = {"ids": []}
    with httpx.Client(timeout=15) as http:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "resumer", "version": "1"},
            },
        }
        opened = http.post(url, json=init, headers=ACCEPT)
        headers = {
            **ACCEPT,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": VERSION,
        }
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(url, json=note, headers=headers)
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "weather"}}
        question = None
        last = None
        with http.stream("POST", url, json=call, headers=headers) as answer:
            for event_id, message in events(answer.iter_lines()):
                last = event_id or last
                seen["ids"].append(event_id)
                if message is not None and message.get("method") == "elicitation/create":
                    question = message
                    break  # and hang up: the stream is lost
        assert question is not None, "the question never came"
        seen["question"] = question["params"]["message"]
        reply = {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"city": "Oslo"}},
        }
        seen["answered"] = http.post(url, json=reply, headers=headers).status_code
        for number in range(pings):
            ping = {"jsonrpc": "2.0", "id": 100 + number, "method": "ping"}
            http.post(url, json=ping, headers=headers)
        resumed = []
        get_headers = {**headers, "accept": "text/event-stream", "last-event-id": str(last)}
        with http.stream("GET", url, headers=get_headers) as stream:
            seen["resume_status"] = stream.status_code
            for event_id, message in events(stream.iter_lines()):
                resumed.append((event_id, message))
                if message is not None and message.get("id") == 7:
                    break
        seen["resumed"] = resumed
        http.delete(url, headers=headers)
    return seen
