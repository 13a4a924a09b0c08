"""Cost of sealing and opening request state: snodo's Keyring against a floor and the official SDK.

Run: .venv/bin/python bench/state.py [--quick]

Prints microseconds per seal+open (median of several repeats of a perf_counter loop) for:

* ``Keyring.seal`` + ``Keyring.open``, the keyring built once, as a server builds it;
* a floor: what any signed-JSON token must do at least. Seal: canonical JSON of the same
  payload (same encoder settings), HMAC-SHA256, base64url. Open: split, HMAC-SHA256,
  constant-time compare, base64url decode, json.loads. No binding, no checks;
* the crypto-only part of that floor (HMAC + base64url over precomputed canonical bytes);
* the official MCP Python SDK (`mcp` 2.3.0), which has its own request-state sealing in
  mcp/server/request_state.py: RequestStateBoundary with the built-in AES-256-GCM codec
  (encrypted, bound to method, tool name/arguments digest, principal, audience, expiry).
  Its private _seal/_unseal are the exact per-round work its middleware does. Its state
  is a string, so it carries the JSON text of the same data.

No timing assertions: figures on a shared machine swing; read the ratios.
"""

from __future__ import annotations

import base64
import hmac
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from snodo.core.context import Context
from snodo.core.state.keyring import Keyring

try:  # the official SDK comes with the bench extra
    from mcp.server.context import ServerRequestContext
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
except ImportError:
    HAVE_MCP = False
else:
    HAVE_MCP = True

SECRET = bytes(range(32))
KEYRING = Keyring(secret=SECRET)
CLOCK = 1_800_000_000.5
PRINCIPAL = "alice"
METHOD = "tools/call"
PARAMS: dict[str, Any] = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    },
    "name": "get_weather",
    "arguments": {"location": "New York", "days": 3, "units": ["metric", "wind"]},
}
DATA: Any = {"step": 2, "answers": {"github_login": "octocat", "size": 3.5}, "seen": ["a", "b"]}

_encode = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def measure(fn: Callable[[], object], iterations: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean µs per call in a loop of ``iterations``."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iterations):
            fn()
        samples.append((time.perf_counter() - start) / iterations * 1e6)
    return statistics.median(samples)


def snodo_ctx() -> Context:
    return Context(
        request_id=1,
        request_method=METHOD,
        request_params=PARAMS,
        protocol_version="2026-07-28",
        client_capabilities={},
        clock=lambda: CLOCK,
    )


def snodo_case() -> Callable[[], object]:
    ctx = snodo_ctx()

    def run() -> object:
        token = KEYRING.seal(DATA, ctx, principal=PRINCIPAL)
        return KEYRING.open(token, ctx, principal=PRINCIPAL)

    assert run() == DATA
    return run


def floor_case() -> Callable[[], object]:
    def run() -> object:
        payload = _encode({"data": DATA, "exp": 1_800_000_300, "iat": 1_800_000_000})
        signed = "v1." + _b64(payload.encode("utf-8"))
        token = signed + "." + _b64(hmac.digest(SECRET, signed.encode("ascii"), "sha256"))
        # open
        head, mac = token.rsplit(".", 1)
        expected = _b64(hmac.digest(SECRET, head.encode("ascii"), "sha256"))
        if not hmac.compare_digest(expected, mac):
            raise ValueError("bad mac")
        return json.loads(_unb64(head.split(".", 1)[1]))["data"]

    assert run() == DATA
    return run


def crypto_floor_case() -> Callable[[], object]:
    payload = _encode({"data": DATA, "exp": 1_800_000_300, "iat": 1_800_000_000}).encode()

    def run() -> object:
        signed = _b64(payload).encode("ascii")
        mac = _b64(hmac.digest(SECRET, signed, "sha256"))
        expected = _b64(hmac.digest(SECRET, signed, "sha256"))
        return hmac.compare_digest(expected, mac) and _unb64(signed.decode("ascii"))

    run()
    return run


def sdk_case() -> Callable[[], object] | None:
    if not HAVE_MCP:
        return None
    security = RequestStateSecurity(keys=[SECRET], bind_principal=lambda _ctx: PRINCIPAL)
    boundary = RequestStateBoundary(security, default_audience="bench")
    # Only method and params are read by _seal/_unseal; the rest is transport plumbing.
    ctx: Any = ServerRequestContext(
        session=None,  # type: ignore[arg-type]
        lifespan_context={},
        protocol_version="2026-07-28",
        method=METHOD,
        params=PARAMS,
    )
    text = json.dumps(DATA)

    def run() -> object:
        token = boundary._seal(ctx, text)
        retry: Any = ServerRequestContext(
            session=None,  # type: ignore[arg-type]
            lifespan_context={},
            protocol_version="2026-07-28",
            method=METHOD,
            params={**PARAMS, "requestState": token},
        )
        plaintext, _binding = boundary._unseal(retry)
        return json.loads(plaintext)

    assert run() == DATA
    return run


def main() -> None:
    quick = "--quick" in sys.argv
    iterations, repeats = (2_000, 3) if quick else (20_000, 7)
    token = KEYRING.seal(DATA, snodo_ctx(), principal=PRINCIPAL)
    print(f"token: {len(token)} chars; {iterations} iterations x {repeats} repeats, median")
    floor = measure(floor_case(), iterations, repeats)

    def row(label: str, micros: float) -> None:
        print(f"{label:46} {micros:7.2f} µs  x{micros / floor:.2f} floor")

    row("floor (canonical JSON + HMAC + base64url)", floor)
    row("  of which HMAC + base64url only", measure(crypto_floor_case(), iterations, repeats))
    ours = measure(snodo_case(), iterations, repeats)
    row("snodo Keyring seal+open", ours)
    sdk = sdk_case()
    if sdk is None:
        print("official SDK (mcp): not installed; no side-by-side figure")
        return
    theirs = measure(sdk, iterations, repeats)
    row("mcp 2.3.0 RequestStateBoundary _seal+_unseal", theirs)
    print(f"snodo / mcp: {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
