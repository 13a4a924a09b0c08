"""The pinned 2025-11-25 schema as an independent oracle for what legacy sessions send.

Every message the server sends a legacy client (responses, its own requests,
notifications) must validate against the raw schema of that revision under
``jsonschema``'s 2020-12 validator, and each result against the result definition of
the method it answers.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator

from tests.support.paths import schema_dir

LEGACY_REVISION = "2025-11-25"

RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
}


@functools.cache
def _validator(definition: str) -> Draft202012Validator:
    path = schema_dir().parent / LEGACY_REVISION / "schema.json"
    defs = json.loads(path.read_text(encoding="utf-8"))["$defs"]
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": defs})


def problems(definition: str, instance: Any) -> list[str]:
    return [error.message for error in _validator(definition).iter_errors(instance)]


def check_sent(message: dict[str, Any]) -> None:
    """A message the server sent on its own: a request or a notification."""
    kind = "ServerRequest" if "id" in message else "ServerNotification"
    assert problems(kind, message) == [], message


def check_response(method: str, response: dict[str, Any]) -> None:
    assert problems("JSONRPCMessage", response) == [], response
    if "result" in response:
        assert problems(RESULTS[method], response["result"]) == [], response
        for modern in ("resultType", "ttlMs", "cacheScope"):
            assert modern not in response["result"], response
