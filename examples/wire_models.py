"""The generated wire models on their own: JSON in, typed objects, JSON out."""

import json

from pydantic import MISSING

from snodo_wire import CallToolRequest, ElicitResult, adapters
from snodo_wire.tables import METHODS

raw_bytes = b"""{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
  "name": "forecast", "arguments": {"days": 2},
  "inputResponses": {"city": {"action": "accept", "content": {"city": "Oslo"}}},
  "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}}"""

request = CallToolRequest.model_validate_json(raw_bytes)
params = request.params
print(params.name, params.arguments)  # Python names ...
if params.input_responses is not MISSING:  # a field that was not sent is MISSING
    answer = params.input_responses["city"]
    if isinstance(answer, ElicitResult):
        print(answer.action, answer.content)
print(params.request_state is MISSING)  # True: absent, and absent again when dumped
print(list(json.loads(params.model_dump_json())))  # ... wire names out
block = adapters.content_block.validate_python({"type": "text", "text": "hi"})  # unions
print(type(block).__name__)
print(METHODS["tools/call"].input_required)  # may this method answer input_required?
