"""Sealed request state for multi round-trip requests (MRTR).

Theory of operation
-------------------
A server that answers ``input_required`` may hand the client a ``requestState`` string,
and the client echoes it on the retry. basic/patterns/mrtr.mdx says that string is
attacker-controlled: if it steers anything, the server MUST protect its integrity and
SHOULD bind it to the principal, a short expiry and the originating request. A
``Keyring``'s ``seal`` and ``open`` do exactly that, and nothing else:

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
* Encrypted tokens (``Keyring(..., encrypted=True)``, the optional ``cryptography``
  package) are ``e1.<kid>.<box>``: ``box`` is base64url of a random 96-bit nonce followed by the
  AES-256-GCM encryption of the same payload, with ``e1.<kid>.<binding>`` as associated
  data. So the binding, key ids, keyrings, expiry and the one error work as for ``v1``;
  only the payload is hidden. The AES key is HKDF-SHA256 of the secret (RFC 5869), so
  the secret is never used as both HMAC and AES key. ``open`` takes either format,
  which lets a fleet switch ``encrypted`` on or off node by node.
* One-time tokens (``seal(..., once=True)``, and every token of a keyring with a
  ``guard``) carry ``"jti"``, 128 random bits, in the payload. Replay within the
  lifetime is otherwise possible (mrtr.mdx: at-most-once consumption MUST be enforced
  server-side), so ``open`` refuses them and ``open_once`` verifies exactly as ``open``
  does, then asks a ``snodo.core.state.replay.ReplayGuard`` to consume the id: the
  second presentation fails with the same InvalidState. ``open_once``
  refuses tokens without an id, so a guarded opener never accepts a replayable token.

Where things are: ``canonical`` (canonical JSON, base64url), ``keys`` (secrets, key ids,
fingerprints, the derived AES key), ``token`` (the two token formats), ``keyring``
(``Keyring``: the options checked once, with ``seal``, ``open`` and ``open_once``: the one
API for sealing). ``inspect`` reads a token's fields without verifying it, for operators.

Apart from the guard, which the caller supplies, none of it does I/O; the time comes
from ``ctx.clock()`` and randomness from ``os.urandom`` (a parameter, for test vectors).

The package is sealed state and what guards it: ``canonical``, ``keys``, ``token``,
``keyring``, ``sealing`` (binding state to a request's context) and ``replay`` (the
one-time guard's contract, and ``MemoryGuard``). It is part of the core.
"""

from __future__ import annotations

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
    inspect,
)

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
    "fingerprint",
    "inspect",
]
