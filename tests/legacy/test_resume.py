"""A lost legacy SSE stream, resumed with Last-Event-ID on one worker (the in-process
event log); tests/scaleout/test_legacy_sessions.py does the same across two workers."""

from __future__ import annotations

from tests.support.legacy_resume import lose_and_resume
from tests.support.processes import serving, snodo_run

TARGET = "tests/legacy/shared_server.py:server"


def test_a_lost_post_stream_is_resumed_with_its_answer() -> None:
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        seen = lose_and_resume(f"{server.base}/mcp")
    assert seen["question"] == "Which city?"
    assert seen["ids"][0].endswith(".0"), "a priming event first"
    assert seen["answered"] == 202
    assert seen["resume_status"] == 200
    [(event_id, answer)] = seen["resumed"]
    stream = seen["ids"][0].rsplit(".", 1)[0]
    assert event_id.startswith(stream + "."), "the same stream, resumed"
    assert answer["result"]["content"][0]["text"] == "sunny in Oslo (worker ?)"
