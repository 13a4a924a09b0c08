"""Two workers sharing a store (SQLite for one host, Redis for many): a code minted by
one is redeemed by the other, once, and the other accepts the tokens the first began."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.auth_proxy.flows import REDIRECT, call_me, error, register, sign_in, verifier
from tests.auth_proxy.site import Site, proxied
from tests.support.idp import serve_provider


def two_workers(store: str) -> Iterator[tuple[Site, Site]]:
    with ExitStack() as stack:
        idp = stack.enter_context(serve_provider())
        first = stack.enter_context(proxied(idp, store))
        second = stack.enter_context(proxied(idp, store, base=first.base))
        yield first, second


@pytest.fixture(params=["sqlite", "redis"])
def workers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Site, Site]]:
    if request.param == "sqlite":
        store = str(tmp_path / "proxy.db")
    else:
        store = request.getfixturevalue("redis_url")
    yield from two_workers(store)


def redeem(worker: Site, client: str, code: str, code_verifier: str) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": client,
        "redirect_uri": REDIRECT,
        "code_verifier": code_verifier,
    }
    return httpx.post(worker.address + "/token", data=form)


def test_a_code_minted_on_one_worker_is_redeemed_once_on_another(
    workers: tuple[Site, Site],
) -> None:
    first, second = workers
    assert second.address != first.address and second.base == first.base
    client = register(first)["client_id"]  # registered on the first, known to both
    code_verifier = verifier()
    code = sign_in(first, client, code_verifier)["code"]
    answer = redeem(second, client, code, code_verifier)
    assert answer.status_code == 200, answer.text
    assert error(redeem(first, client, code, code_verifier)) == "invalid_grant"
    access = answer.json()["access_token"]
    assert call_me(second, access).status_code == 200
    assert call_me(first, access).status_code == 200


def test_workers_that_share_no_store_do_not_know_each_others_codes() -> None:
    """The control: with a store of its own, the second worker refuses the code."""
    with ExitStack() as stack:
        idp = stack.enter_context(serve_provider())
        first = stack.enter_context(proxied(idp))
        second = stack.enter_context(proxied(idp, base=first.base))
        client = register(first)["client_id"]
        code_verifier = verifier()
        code = sign_in(first, client, code_verifier)["code"]
        assert error(redeem(second, client, code, code_verifier), 401) == "invalid_client"
        assert redeem(first, client, code, code_verifier).status_code == 200
