"""A 2026-07-28 server built on the official SDK (mcp 2.3.0, the main venv's), for tests.

    python tests/client/official_modern_server.py stdio
    python tests/client/official_modern_server.py http PORT

Its one tool asks the user a question the MRTR way: it returns an InputRequiredResult
with a form elicitation and a request state, and completes when called again with the
answer and the state.
"""

from __future__ import annotations

import json
import sys

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("official-modern", version="1.0.0")

QUESTION = types.ElicitRequest(
    method="elicitation/create",
    params=types.ElicitRequestFormParams(
        mode="form",
        message="Which city?",
        requested_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    ),
)


@server.tool()
def forecast(days: int, ctx: Context) -> str | types.InputRequiredResult:
    """Asks which city, then answers."""
    answer = (ctx.input_responses or {}).get("city")
    if not isinstance(answer, types.ElicitResult) or ctx.request_state is None:
        return types.InputRequiredResult(
            input_requests={"city": QUESTION}, request_state=json.dumps({"days": days})
        )
    if answer.action != "accept":
        return f"no forecast ({answer.action})"
    known = json.loads(ctx.request_state)
    return f"{(answer.content or {}).get('city')}: sunny for {known['days']} days"


if __name__ == "__main__":
    if sys.argv[1] == "http":
        import uvicorn

        app = server.streamable_http_app(json_response=True, stateless_http=True)
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run("stdio")
