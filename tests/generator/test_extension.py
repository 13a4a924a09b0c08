"""The Tasks extension as a third input of the generator: its package, and the checks
that keep its overlay honest."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from generator.__main__ import check_repeated
from generator.overlay import OverlayError
from generator.prepass import prepare
from generator.revisions import SCHEMA_ROOT, load_revision
from tests.support.paths import schema_dir

TASKS = load_revision(SCHEMA_ROOT / "ext-tasks")


def _schema() -> Any:
    return json.loads((schema_dir().parent / "ext-tasks" / "schema.json").read_text())


def test_the_extension_names_its_identifier_and_base() -> None:
    from snodo_wire_tasks import protocol

    assert protocol.EXTENSION_ID == "io.modelcontextprotocol/tasks"
    assert protocol.LATEST_PROTOCOL_VERSION == "2026-07-28"


def test_its_methods_and_notification_are_tables() -> None:
    from snodo_wire_tasks import models, tables

    assert sorted(tables.METHODS) == ["tasks/cancel", "tasks/get", "tasks/update"]
    assert tables.METHODS["tasks/update"].params is models.UpdateTaskRequestParams
    assert not tables.INPUT_REQUIRED_METHODS
    assert list(tables.SERVER_NOTIFICATIONS) == ["notifications/tasks"]


def test_detailed_task_results_are_one_named_class_per_status() -> None:
    from snodo_wire_tasks import adapters

    wire = {
        "resultType": "complete",
        "taskId": "t",
        "status": "completed",
        "createdAt": "2026-11-30T10:00:00Z",
        "lastUpdatedAt": "2026-11-30T10:00:01Z",
        "ttlMs": None,
        "result": {"content": [{"type": "text", "text": "Hello, Luca!"}], "isError": False},
    }
    loaded = adapters.get_task_result.validate_python(wire)
    assert type(loaded).__name__ == "GetCompletedTaskResult"
    assert loaded.model_dump(mode="json", by_alias=True) == wire
    with pytest.raises(ValueError):
        adapters.get_task_result.validate_python({**wire, "status": "completed", "result": 1})


def test_a_repeated_definition_that_differs_from_the_base_stops_generation() -> None:
    schema = _schema()
    check_repeated(schema, TASKS, None)  # the pinned pair agrees
    changed = copy.deepcopy(schema)
    changed["$defs"]["TextContent"]["required"] = ["type"]
    with pytest.raises(OverlayError, match="TextContent"):
        check_repeated(changed, TASKS, None)


def test_a_distributed_union_that_changed_shape_stops_generation() -> None:
    schema = _schema()
    schema["$defs"]["GetTaskResult"]["allOf"][1]["anyOf"].pop()
    with pytest.raises(OverlayError, match="GetTaskResult has 4 branches"):
        prepare(schema, TASKS.overlay)
