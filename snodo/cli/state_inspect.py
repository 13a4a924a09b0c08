"""``snodo state inspect TOKEN``: a request state token's readable fields and, as far as
what the operator gives allows (the keyring, the retried request, the principal), why a
server would refuse it. The server itself never says why on the wire."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from snodo.core import state
from snodo.core.errors import InvalidState
from snodo.core.state.replay import MemoryGuard

__all__ = ["inspect_command", "inspect_token"]


def _read_keys(path: str) -> list[tuple[str, bytes]]:
    """A keyring file: one ``kid:hex-secret`` a line (the first key seals)."""
    keys = []
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            kid, _, secret = line.strip().partition(":")
            keys.append((kid, bytes.fromhex(secret)))
    return keys


@dataclass(frozen=True, slots=True)
class _Request:
    """Just enough of a request for state binding: what a retry carried."""

    request_method: str
    request_params: Mapping[str, Any]
    clock: Callable[[], float]


def _verifies(
    token: str,
    keys: list[tuple[str, bytes]],
    request: Mapping[str, Any],
    principal: str | None,
    at: float,
    once: bool,
) -> bool:
    retry = _Request(request["method"], request.get("params") or {}, lambda: at)
    keyring = state.Keyring(keys=keys, ttl=state.MAX_TTL)
    try:
        if once:  # a throwaway guard: checking must not consume anything real
            asyncio.run(keyring.open_once(token, retry, principal=principal, guard=MemoryGuard()))
        else:
            keyring.open(token, retry, principal=principal)
    except InvalidState:
        return False
    return True


def inspect_token(
    token: str,
    keys: list[tuple[str, bytes]] | None = None,
    request: Mapping[str, Any] | None = None,
    principal: str | None = None,
    now: float | None = None,
) -> tuple[dict[str, Any], str]:
    """The token's readable fields and, as far as what was given allows, why it would be
    refused. For operators: the server itself never says why on the wire."""
    try:
        fields = state.inspect(token)
    except ValueError:
        return {}, "malformed: not a state token"
    now = time.time() if now is None else now
    encrypted = fields["version"] != state.VERSION
    if keys is not None:
        known = {kid for kid, _ in keys} | {state.fingerprint(secret) for _, secret in keys}
        if fields["kid"] not in known:
            return fields, f"unknown key id {fields['kid']!r}: not in this keyring"
        if request is not None:
            # Readable tokens are checked at their issue time, to tell a bad signature
            # from expiry; encrypted ones hide their times and are checked now.
            at = now if encrypted else float(fields.get("iat", 0))
            verified = any(
                _verifies(token, keys, request, principal, at, once) for once in (False, True)
            )
            if not verified and encrypted:
                return fields, "refused: bad signature or binding, or expired (times are hidden)"
            if not verified:
                return fields, (
                    "bad signature: forged, or bound to another method, params or principal"
                )
            if encrypted:
                return fields, "valid: this request would accept it"
    if isinstance(fields.get("exp"), int) and now >= fields["exp"]:
        return fields, f"expired {int(now - fields['exp'])} s ago"
    if keys is None or request is None:
        return fields, "not expired; give --keys and --request to check the signature"
    return fields, "valid: this request would accept it"


def inspect_command(args: argparse.Namespace) -> int:
    keys = _read_keys(args.keys) if args.keys else None
    request = json.loads(Path(args.request).read_text()) if args.request else None
    fields, verdict = inspect_token(args.token, keys, request, args.principal)
    for name in ("iat", "exp"):
        if isinstance(fields.get(name), int):
            fields[f"{name} (UTC)"] = datetime.fromtimestamp(fields[name], UTC).isoformat()
    print(json.dumps(fields, indent=2, ensure_ascii=False))
    print(verdict)
    return 0 if verdict.startswith(("valid", "not expired")) else 1
