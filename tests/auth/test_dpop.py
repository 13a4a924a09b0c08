"""DPoP proofs (RFC 9449) as the server checks them: the client's proofs accepted for
any request, each defect refused with the RFC's error, a proof taken once across
stores shared by workers, and server nonces issued, rotated and required."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey, RSAKey

from snodo.auth.dpop import DPoP, DPoPRefusal, Nonces, access_token_hash, normal_htu
from snodo.auth.protected import ProofRefused
from snodo.auth.proxy_store import SQLiteProxyStore
from snodo.oauth.dpop import DPoPKey

URL = "https://mcp.example.com/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def refused(checker: DPoP, proof: str | None, method: str = "POST", **kw: Any) -> ProofRefused:
    with pytest.raises(ProofRefused) as caught:
        run(checker.check(proof, method, URL, **kw))
    return caught.value


def crafted(
    key: ECKey | RSAKey | OctKey,
    claims: dict[str, Any],
    header: dict[str, Any] | None = None,
    alg: str = "ES256",
) -> str:
    """A proof made by hand, one field at a time, as a careless or hostile client might."""
    public = key.as_dict(private=False)
    head = {"typ": "dpop+jwt", "alg": alg, "jwk": public, **(header or {})}
    return jwt.encode({k: v for k, v in head.items() if v is not None}, claims, key, [alg])


def good_claims(**over: Any) -> dict[str, Any]:
    claims = {"jti": "j-1", "htm": "POST", "htu": URL, "iat": int(time.time())}
    claims.update(over)
    return {k: v for k, v in claims.items() if v is not None}


def test_a_client_proof_is_accepted_once() -> None:
    checker = DPoP()
    key = DPoPKey()
    proof = key.proof("POST", URL + "?ignored=1", access_token="tok")
    accepted = run(checker.check(proof, "POST", URL, "tok"))
    assert accepted.jkt == key.thumbprint
    assert accepted.claims["htu"] == URL  # no query in the proof
    assert refused(checker, proof, access_token="tok").error == "invalid_dpop_proof"


@settings(max_examples=40, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", "DELETE", "PUT"]),
    host=st.from_regex(r"[a-z][a-z0-9-]{0,12}\.(com|org|test)", fullmatch=True),
    path=st.from_regex(r"(/[A-Za-z0-9._~-]{1,8}){0,3}", fullmatch=True),
    token=st.from_regex(r"[A-Za-z0-9._~+/-]{1,40}", fullmatch=True),
)
def test_every_proof_the_client_makes_passes_the_server(
    method: str, host: str, path: str, token: str
) -> None:
    """The client's proofs and the server's checks agree for any request."""
    key = DPoPKey()
    url = f"https://{host}{path}"
    proof = key.proof(method, f"{url}?q=1#f", access_token=token)
    accepted = run(DPoP().check(proof, method, url, token))
    assert accepted.jkt == key.thumbprint


def test_htu_compared_as_rfc_3986_normalizes() -> None:
    assert normal_htu("HTTPS://MCP.Example.COM:443/mcp/") == "https://mcp.example.com/mcp"
    assert normal_htu("http://[::1]:8000/mcp") == "http://[::1]:8000/mcp"
    assert normal_htu("http://a.test:80/x?y#z") == "http://a.test/x"
    assert normal_htu("https://a.test/MCP") != normal_htu("https://a.test/mcp")


@pytest.mark.parametrize(
    ("proof", "why"),
    [
        (None, "no DPoP proof"),
        ("", "no DPoP proof"),
        ("not.a.jws", "not a JWS"),
        ("a, b", "one DPoP proof"),
    ],
)
def test_no_proof_or_garbage(proof: str | None, why: str) -> None:
    assert why in refused(DPoP(), proof).description


def test_each_defect_is_refused_with_invalid_dpop_proof() -> None:
    key = ECKey.generate_key("P-256")
    checker = DPoP()

    def error(proof: str, **kw: Any) -> str:
        problem = refused(checker, proof, **kw)
        assert problem.error == "invalid_dpop_proof"
        return problem.description

    assert "typ" in error(crafted(key, good_claims(), {"typ": "JWT"}))
    assert "typ" in error(crafted(key, good_claims(), {"typ": None}))
    assert "public key" in error(crafted(key, good_claims(), {"jwk": None}))
    private = key.as_dict(private=True)
    assert "private key" in error(crafted(key, good_claims(), {"jwk": private}))
    assert "jti" in error(crafted(key, good_claims(jti=None)))
    assert "htm" in error(crafted(key, good_claims(htm="GET")))
    assert "htu" in error(crafted(key, good_claims(htu="https://mcp.example.com/other")))
    assert "htu" in error(crafted(key, good_claims(htu=URL + "?x=1")))
    assert "iat" in error(crafted(key, good_claims(iat=int(time.time()) - 3600)))
    assert "iat" in error(crafted(key, good_claims(iat=int(time.time()) + 3600)))
    assert "iat" in error(crafted(key, good_claims(iat="now")))
    assert "ath" in error(crafted(key, good_claims(ath="wrong")), access_token="tok")
    assert "ath" in error(crafted(key, good_claims()), access_token="tok")
    # Signed by another key than the one it carries.
    other = ECKey.generate_key("P-256")
    forged = crafted(other, good_claims(), {"jwk": key.as_dict(private=False)})
    assert "signature" in error(forged)
    # A symmetric key, and no signature at all, are never proof of possession.
    secret = OctKey.generate_key(256)
    hmac_proof = jwt.encode({"typ": "dpop+jwt", "alg": "HS256"}, good_claims(), secret)
    assert "algorithm" in error(hmac_proof)
    header = base64.urlsafe_b64encode(
        json.dumps({"typ": "dpop+jwt", "alg": "none", "jwk": key.as_dict(private=False)}).encode()
    )
    body = base64.urlsafe_b64encode(json.dumps(good_claims()).encode())
    unsigned = header.decode().rstrip("=") + "." + body.decode().rstrip("=") + "."
    assert "algorithm" in error(unsigned)


def test_rsa_proofs_are_taken_and_the_token_binding_is_by_thumbprint() -> None:
    rsa = DPoPKey(RSAKey.generate_key(2048))
    assert rsa.algorithm == "RS256"
    proof = rsa.proof("GET", URL, access_token="t")
    accepted = run(DPoP().check(proof, "GET", URL, "t"))
    assert accepted.jkt == RSAKey.import_key(rsa.public_jwk).thumbprint()
    assert accepted.claims["ath"] == access_token_hash("t")


def test_a_proof_replayed_to_another_worker_sharing_the_store_is_refused(tmp_path: Path) -> None:
    """Two workers, each its own DPoP and its own connection to one SQLite file."""
    first = DPoP(store=SQLiteProxyStore(tmp_path / "proxy.db"), secret=b"s" * 32)
    second = DPoP(store=SQLiteProxyStore(tmp_path / "proxy.db"), secret=b"s" * 32)
    proof = DPoPKey().proof("POST", URL)
    run(first.check(proof, "POST", URL))
    assert refused(second, proof).description == "the proof was used before"
    # A store of its own knows nothing of it: the reason workers must share one.
    run(DPoP().check(proof, "POST", URL))


def test_nonces_are_asked_for_issued_rotated_and_expire() -> None:
    clock = Clock()
    checker = DPoP(nonce=True, secret=b"k" * 32, nonce_lifetime=60, clock=clock)
    key = DPoPKey()
    asked = refused(checker, key.proof("POST", URL, now=clock.now))
    assert asked.error == "use_dpop_nonce" and asked.nonce
    run(checker.check(key.proof("POST", URL, nonce=asked.nonce, now=clock.now), "POST", URL))
    clock.now += 60  # the next window: a new nonce, the previous one still taken
    assert checker.nonces.current() != asked.nonce
    run(checker.check(key.proof("POST", URL, nonce=asked.nonce, now=clock.now), "POST", URL))
    clock.now += 60  # two windows on: refused, with the current one to use
    late = refused(checker, key.proof("POST", URL, nonce=asked.nonce, now=clock.now))
    assert (late.error, late.nonce) == ("use_dpop_nonce", checker.nonces.current())
    # Another worker with the same secret issues and takes the same nonces.
    other = Nonces(checker.nonces._key, lifetime=60, clock=clock)
    assert other.current() == checker.nonces.current() and other.valid(late.nonce)
    assert not Nonces(b"x" * 32, lifetime=60, clock=clock).valid(late.nonce)
    assert not other.valid("garbage") and not other.valid(None)


def test_the_token_endpoint_answers_a_bad_proof_with_400_and_the_nonce() -> None:
    checker = DPoP(nonce=True, secret=b"k" * 32)
    endpoint = "https://mcp.example.com/token"
    with pytest.raises(DPoPRefusal) as caught:
        run(checker.token_request({"dpop": DPoPKey().proof("POST", endpoint)}, endpoint))
    answer = caught.value.answer
    assert answer.status == 400
    assert json.loads(answer.body)["error"] == "use_dpop_nonce"
    assert dict(answer.headers)[b"dpop-nonce"] == checker.nonces.current().encode()
    assert run(checker.token_request({}, endpoint)) is None  # no proof: a bearer token


def test_the_resource_side_checks_scheme_binding_and_key() -> None:
    checker = DPoP()
    key = DPoPKey()

    def outcome(scheme: str, bound: str | None, headers: dict[str, str]) -> str | None:
        try:
            run(checker.resource_request(headers, "POST", URL, scheme, "tok", bound))
        except ProofRefused as problem:
            return problem.error
        return None

    proof = {"dpop": key.proof("POST", URL, access_token="tok")}
    assert outcome("dpop", key.thumbprint, proof) is None
    assert outcome("bearer", key.thumbprint, {}) == "invalid_token"
    assert outcome("dpop", None, {"dpop": key.proof("POST", URL, access_token="tok")}) == (
        "invalid_token"
    )
    stranger = {"dpop": DPoPKey().proof("POST", URL, access_token="tok")}
    assert outcome("dpop", key.thumbprint, stranger) == "invalid_dpop_proof"
    assert outcome("bearer", None, {}) is None  # a plain bearer token, DPoP not required
    strict = DPoP(required=True)
    with pytest.raises(ProofRefused):
        run(strict.resource_request({}, "POST", URL, "bearer", "tok", None))
