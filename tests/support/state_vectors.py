"""What the state-token tests share: fixed keys, a request, a fixed clock, and the
documented vectors of docs/state-token.md with an independent reading of its format."""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tests.support.paths import ROOT

NOW = 1_800_000_000.5
KEY_A = bytes(range(32))
KEY_B = bytes(range(32, 64))
KEY_C = bytes(range(64, 96))
PARAMS: dict[str, Any] = {
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    "name": "get_weather",
    "arguments": {"location": "New York", "days": [1, 2], "detail": {"wind": True, "n": 1}},
}
DATA: Any = {"step": 2, "answers": {"login": "octocat"}}
UNBOUND = ("_meta", "inputResponses", "requestState")
"""The params members a token is not bound to: they change between rounds."""

SIGNED_VECTORS = "## Test vectors"
ONCE_AND_ENCRYPTED_VECTORS = "## Test vectors: one-time and encrypted tokens"


@dataclass(frozen=True)
class Ctx:
    """The smallest thing ``seal``/``open`` accept: method, params and a fixed clock."""

    request_method: str = "tools/call"
    request_params: Mapping[str, Any] = field(default_factory=lambda: dict(PARAMS))
    now: float = NOW

    @property
    def clock(self) -> Callable[[], float]:
        return lambda: self.now


def later(ctx: Ctx, seconds: float) -> Ctx:
    return replace(ctx, now=ctx.now + seconds)


def with_args(**changes: Any) -> dict[str, Any]:
    """``PARAMS`` with these arguments changed or added."""
    return {**PARAMS, "arguments": {**PARAMS["arguments"], **changes}}


OTHER_REQUESTS: dict[str, Ctx] = {
    "other method": Ctx(request_method="prompts/get"),
    "other tool": Ctx(request_params={**PARAMS, "name": "get_forecast"}),
    "argument changed": Ctx(request_params=with_args(location="Boston")),
    "nested argument changed": Ctx(request_params=with_args(detail={"wind": False, "n": 1})),
    "array reordered": Ctx(request_params=with_args(days=[2, 1])),
    "1 became 1.0": Ctx(request_params=with_args(detail={"wind": True, "n": 1.0})),
    "true became 1": Ctx(request_params=with_args(detail={"wind": 1, "n": 1})),
    "argument added": Ctx(request_params=with_args(extra=None)),
    "argument removed": Ctx(
        request_params={**PARAMS, "arguments": {"location": "New York", "days": [1, 2]}}
    ),
    "arguments dropped": Ctx(request_params={"_meta": {}, "name": "get_weather"}),
    "top-level member added": Ctx(request_params={**PARAMS, "task": {"ttl": 1}}),
    "NaN in params": Ctx(request_params=with_args(days=[math.nan])),
}
"""Requests that differ from ``Ctx()`` in what a token is bound to."""


# --- an independent reading of the format, from docs/state-token.md alone ---------------


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def canonical(value: Any) -> str:
    return json.dumps(
        value, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
    )


def doc_vectors(heading: str) -> list[dict[str, Any]]:
    """The vectors in the first json block after ``heading`` in docs/state-token.md."""
    text = (ROOT / "docs" / "state-token.md").read_text(encoding="utf-8")
    match = re.search(r"```json\n(.*?)\n```", text[text.index(heading) :], re.DOTALL)
    assert match, f"no ```json block under {heading!r} in docs/state-token.md"
    vectors: list[dict[str, Any]] = json.loads(match.group(1))
    return vectors


def vector_options(vector: Mapping[str, Any]) -> dict[str, Any]:
    if "secret" in vector:
        return {"secret": bytes.fromhex(vector["secret"])}
    return {"keys": [(kid, bytes.fromhex(key)) for kid, key in vector["keys"]]}


def vector_ctx(vector: Mapping[str, Any]) -> Ctx:
    return Ctx(vector["method"], vector["params"], vector["clock"])
