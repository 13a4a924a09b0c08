"""Sealed request state for multi round-trip requests (MRTR).

Theory of operation
-------------------
A server that answers ``input_required`` may hand the client a ``requestState`` string,
and the client echoes it on the retry. basic/patterns/mrtr.mdx says that string is
attacker-controlled: if it steers anything, the server MUST protect its integrity and
SHOULD bind it to the principal, a short expiry and the originating request. ``seal``
and ``open`` do exactly that, and nothing else:

* The default token is signed, not encrypted: ``v1.<kid>.<payload>.<mac>``, where
  ``payload`` is base64url of canonical JSON ``{"data": ..., "exp": ..., "iat": ...}``.
  Never put secrets in it.
* The MAC is HMAC-SHA256 over ``v1.<kid>.<payload>.<binding>``. ``binding`` is the
  base64url SHA-256 of canonical JSON ``[method, principal, salient params]``. It never
  travels: the opener recomputes it from the retry, so a token replayed on another
  method, other arguments or by another principal fails the MAC like a forgery does.
  Salient params are the request params minus the top-level ``_meta``,
  ``inputResponses`` and ``requestState``, which legitimately change between rounds.
* Canonical JSON: keys sorted by code point, no whitespace, UTF-8, ``1``, ``1.0`` and
  ``true`` kept distinct, NaN and infinities refused (docs/state-token.md has the exact
  rules and test vectors).
* ``open`` checks the cheap things first (size, shape, key id), then the MAC in constant
  time, and only then parses JSON and compares times. Every failure raises the same
  ``InvalidState``, so a forger learns nothing about which check stopped it.
* Keys: ``secret=`` or a keyring ``keys=[(kid, secret), ...]``. A keyring seals with its
  first key and opens with the key the token names. ``secret=`` seals under a key id
  derived from the secret (its fingerprint) and opens a token naming any key id, since
  the key id is under the MAC. A keyring answers to its keys' fingerprints as well as
  their ids, so tokens move both ways between the two modes and key rotation needs no
  synchronised switch.
* Encrypted tokens (``seal(..., encrypted=True)``, optional ``cryptography`` package) are
  ``e1.<kid>.<box>``: ``box`` is base64url of a random 96-bit nonce followed by the
  AES-256-GCM encryption of the same payload, with ``e1.<kid>.<binding>`` as associated
  data. So the binding, key ids, keyrings, expiry and the one error work as for ``v1``;
  only the payload is hidden. The AES key is HKDF-SHA256 of the secret (RFC 5869), so
  the secret is never used as both HMAC and AES key. ``open`` takes either format,
  which lets a fleet switch ``encrypted`` on or off node by node.
* One-time tokens (``seal(..., once=True)``) carry ``"jti"``, 128 random bits, in the
  payload. Replay within the lifetime is otherwise possible (mrtr.mdx: at-most-once
  consumption MUST be enforced server-side), so ``open`` refuses them and ``open_once``
  verifies exactly as ``open`` does, then asks a ``snodo.core.state.replay.ReplayGuard`` to consume
  the id: the second presentation fails with the same InvalidState. ``open_once``
  refuses tokens without an id, so a guarded opener never accepts a replayable token.

Where things are: ``canonical`` (canonical JSON, base64url), ``keys`` (secrets, key ids,
fingerprints, the derived AES key), ``token`` (the two token formats), ``keyring``
(``Keyring``: the options checked once, with ``seal``, ``open`` and ``open_once``). The
functions here are thin wrappers over a ``Keyring`` for code that passes the options on each
call.

Apart from the guard, which the caller supplies, none of it does I/O; the time comes
from ``ctx.clock()`` and randomness from ``os.urandom`` (a parameter, for test vectors).

The package is sealed state and what guards it: ``canonical``, ``keys``, ``token``,
``keyring``, ``sealing`` (binding state to a request's context), ``replay`` (one-time
guards) and ``shared_sqlite``. It may import the core only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from snodo.core.state.canonical import MAX_DATA_DEPTH
from snodo.core.state.keyring import Keyring
from snodo.core.state.keys import MAX_KEYS, MIN_SECRET_BYTES, fingerprint
from snodo.core.state.token import (
    CLOCK_SKEW,
    DEFAULT_TTL,
    ENCRYPTED_VERSION,
    MAX_TOKEN_LENGTH,
    MAX_TTL,
    VERSION,
    StateContext,
    check_principal,
    inspect,
)

if TYPE_CHECKING:
    from snodo.core.state.replay import ReplayGuard

__all__ = [
    "CLOCK_SKEW",
    "DEFAULT_TTL",
    "ENCRYPTED_VERSION",
    "MAX_DATA_DEPTH",
    "MAX_KEYS",
    "MAX_TOKEN_LENGTH",
    "MAX_TTL",
    "MIN_SECRET_BYTES",
    "VERSION",
    "Keyring",
    "StateContext",
    "check_options",
    "fingerprint",
    "inspect",
    "open",
    "open_once",
    "seal",
]


def check_options(
    *,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
    encrypted: bool = False,
) -> None:
    """Raise the TypeError/ValueError ``seal``/``open`` would, so servers fail at start-up.

    With ``encrypted=True`` also the ImportError of a missing ``cryptography`` package.
    """
    Keyring(secret=secret, keys=keys, ttl=ttl, encrypted=encrypted)
    check_principal(principal)


def seal(
    data: Any,
    ctx: StateContext,
    *,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
    once: bool = False,
    encrypted: bool = False,
    randbytes: Callable[[int], bytes] = os.urandom,
) -> str:
    """A token carrying ``data`` and bound to this request: signed, or with ``encrypted``
    also unreadable; with ``once`` it opens only through ``open_once``, one time.

    ``principal`` must come from trusted authentication (None is anonymous).
    ``randbytes`` supplies the one-time id, then the nonce; replace it only to reproduce
    test vectors. Raises TypeError/ValueError for bad options, data that is not JSON, or
    a token that would exceed MAX_TOKEN_LENGTH; ImportError for ``encrypted`` without
    the cryptography package.
    """
    keyring = Keyring(secret=secret, keys=keys, ttl=ttl, encrypted=encrypted)
    return keyring.seal(data, ctx, principal=principal, once=once, randbytes=randbytes)


# Shadows builtins.open inside this module on purpose: the module does no I/O.
def open(
    token: str,
    ctx: StateContext,
    *,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
) -> Any:
    """The data sealed into ``token``, if it was sealed for this request; else InvalidState.

    Pass the options ``seal`` got (``encrypted`` is not needed: both formats open). ``ttl``
    here caps the lifetime a token may claim, so tokens sealed with a longer ttl are
    refused. One-time tokens are refused too: they open only through ``open_once``.
    Option errors raise TypeError/ValueError; everything about the token itself raises
    the one InvalidState.
    """
    return Keyring(secret=secret, keys=keys, ttl=ttl).open(token, ctx, principal=principal)


async def open_once(
    token: str,
    ctx: StateContext,
    *,
    guard: ReplayGuard,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
) -> Any:
    """Like ``open`` for a token sealed with ``once=True``, and only the first time.

    The token is verified completely before ``guard`` is asked to consume its id, so
    forgeries never reach the store. The guard holds the id until ``exp + CLOCK_SKEW``:
    a node whose clock lags by up to the tolerated skew still accepts the token until
    then. A replayed or reusable (no id) token raises the one InvalidState; a failing
    store raises its own error, so the request fails rather than skipping the check.
    """
    keyring = Keyring(secret=secret, keys=keys, ttl=ttl)
    return await keyring.open_once(token, ctx, principal=principal, guard=guard)
