"""A task's result in its request's revision: a tool call that became a task, asked under
SEP-3279's draft (2026-12-01), finishes with the draft's ``outputs``, one per selector
its ``requestedOutputs`` named when it was created (``assistant/content`` without
one); under 2026-07-28 with ``content`` and ``structuredContent``. Literal wire, every
answer checked against its revision, each task result also against the revision's own
``CallToolResult``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from snodo.core.context import Context
from snodo.core.result import tool_error
from snodo.extensions.tasks import MemoryTaskStore, Tasks, background
from snodo.revisions import REVISIONS
from snodo.server import Server, Spec

DRAFT, MODERN = "2026-12-01", "2026-07-28"
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
SCHEMA = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}


def _server() -> Server:
    server = Server(
        "t",
        "1",
        versions=[DRAFT, MODERN],
        extensions=[Tasks(MemoryTaskStore())],
        spec=Spec(check_answers=True),
    )

    @server.tool(task="optional", output_schema=SCHEMA)
    def count() -> Any:
        """Counts, in the background."""

        async def work(ctx: Context) -> Any:
            return {"total": 3}

        return background(work)

    @server.tool(task="optional", output_schema=SCHEMA)
    def sulky() -> Any:
        async def work(ctx: Context) -> Any:
            return tool_error("nope")

        return background(work)

    return server


def _message(method: str, params: dict[str, Any], version: str) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": TASKS,
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}


def _finished(server: Server, params: dict[str, Any], version: str) -> dict[str, Any]:
    """The ``tasks/get`` answer of the task ``params`` made, once it is terminal."""

    async def run() -> dict[str, Any]:
        created = (await server.handle(_message("tools/call", params, version))).response
        assert created is not None and created["result"]["resultType"] == "task", created
        task_id = {"taskId": created["result"]["taskId"]}
        for _ in range(1000):  # 10 s at most: bounded on a loaded machine
            got = (await server.handle(_message("tasks/get", task_id, version))).response
            assert got is not None
            if got["result"]["status"] in ("completed", "failed"):
                return got
            await asyncio.sleep(0.01)
        raise AssertionError("the task never finished")

    got = asyncio.run(asyncio.wait_for(run(), 20))
    assert server.answer_checks is not None and server.answer_checks.invalid == []
    return got


def _result(got: dict[str, Any], version: str) -> str:
    result = got["result"]["result"]
    # A task's result is the call's result without its resultType (the task's own).
    REVISIONS.of(version).models.CallToolResult.model_validate({"resultType": "complete", **result})
    return json.dumps(result, separators=(",", ":"))


def _asked(*selectors: tuple[str, str]) -> list[dict[str, str]]:
    return [{"audience": audience, "format": format_} for audience, format_ in selectors]


MIRROR = '[{"type":"text","text":"{\\"total\\": 3}"}]'


@pytest.mark.parametrize(
    ("selectors", "result"),
    [
        ((), f'{{"outputs":[{{"audience":"assistant","format":"content","content":{MIRROR}}}]}}'),
        (
            (("assistant", "structured"),),
            '{"outputs":[{"audience":"assistant","format":"structured","structuredContent":'
            '{"total":3}}]}',
        ),
        (
            (("assistant", "structured"), ("assistant", "content")),
            '{"outputs":[{"audience":"assistant","format":"structured","structuredContent":'
            f'{{"total":3}}}},{{"audience":"assistant","format":"content","content":{MIRROR}}}]}}',
        ),
    ],
)
def test_a_tasks_result_under_the_draft_has_the_outputs_asked_for(
    selectors: tuple[tuple[str, str], ...], result: str
) -> None:
    params: dict[str, Any] = {"name": "count"}
    if selectors:
        params["requestedOutputs"] = _asked(*selectors)
    got = _finished(_server(), params, DRAFT)
    assert got["result"]["status"] == "completed"
    assert _result(got, DRAFT) == result


def test_a_tasks_result_under_2026_07_28_keeps_the_content_shape() -> None:
    got = _finished(_server(), {"name": "count"}, MODERN)
    assert _result(got, MODERN) == f'{{"content":{MIRROR},"structuredContent":{{"total":3}}}}'


def test_a_tasks_tool_error_under_the_draft_is_a_failed_content_output() -> None:
    server = _server()
    got = _finished(server, {"name": "sulky"}, DRAFT)
    assert _result(got, DRAFT) == (
        '{"outputs":[{"audience":"assistant","format":"content","content":[{"type":"text",'
        '"text":"nope"}]}],"isError":true}'
    )
    structured_only = _finished(
        server, {"name": "sulky", "requestedOutputs": _asked(("assistant", "structured"))}, DRAFT
    )
    assert structured_only["result"]["status"] == "failed"
    assert structured_only["result"]["error"] == {
        "code": -32603,
        "message": "Tool sulky failed: nope",
    }


def test_an_undeclared_output_is_refused_before_any_task_is_made() -> None:
    server = _server()
    params = {"name": "count", "requestedOutputs": _asked(("user", "content"))}
    reply = asyncio.run(server.handle(_message("tools/call", params, DRAFT))).response
    assert json.dumps(reply, separators=(",", ":")) == (
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Tool count declares no output '
        'user/content (it declares assistant/content, assistant/structured)"}}'
    )
    assert server.answer_checks is not None and server.answer_checks.invalid == []
