"""Clients named by a client-id metadata document: an ``http:`` loopback URL here (an
``https:`` one elsewhere) that the proxy fetches and checks before trusting it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.auth_proxy.flows import REDIRECT, authorize_url, error, sign_in, token, verifier
from tests.auth_proxy.site import Site
from tests.support.idp import serve_app


class Documents:
    """Serves one JSON document per path, as a client's web site would."""

    def __init__(self) -> None:
        self.url = ""
        self.documents: dict[str, Any] = {}
        self.fetches = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.fetches += 1
        document = self.documents.get(scope["path"])
        status = 404 if document is None else 200
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(document).encode()})


@pytest.fixture(scope="module")
def documents() -> Iterator[Documents]:
    served = Documents()
    with serve_app(served) as url:
        served.url = url
        yield served


def test_a_client_named_by_its_metadata_document_signs_in(site: Site, documents: Documents) -> None:
    client = documents.url + "/client.json"
    documents.documents["/client.json"] = {
        "client_id": client,
        "client_name": "Document Client",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    }
    code_verifier = verifier()
    code = sign_in(site, client, code_verifier)["code"]
    form = {"grant_type": "authorization_code", "code": code, "client_id": client}
    answer = token(site, redirect_uri=REDIRECT, code_verifier=code_verifier, **form)
    assert answer.status_code == 200, answer.text
    page = httpx.get(authorize_url(site, client, verifier()))
    assert "Document Client" in page.text


@pytest.mark.parametrize(
    "document",
    [
        {"client_id": "http://127.0.0.1:1/someone-else.json", "redirect_uris": [REDIRECT]},
        {"client_id": "SELF", "redirect_uris": ["javascript:alert(1)"]},
        {
            "client_id": "SELF",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "client_secret_basic",
        },
        None,
    ],
)
def test_a_document_that_does_not_hold_up_is_refused(
    site: Site, documents: Documents, document: Any
) -> None:
    path = f"/bad-{documents.fetches}.json"
    client = documents.url + path
    if document is not None:
        documents.documents[path] = {
            **document,
            "client_id": document["client_id"].replace("SELF", client),
        }
    assert error(httpx.get(authorize_url(site, client, verifier()))) == "invalid_client"


def test_a_document_client_must_use_one_of_its_redirect_uris(
    site: Site, documents: Documents
) -> None:
    client = documents.url + "/strict.json"
    documents.documents["/strict.json"] = {"client_id": client, "redirect_uris": [REDIRECT]}
    answer = httpx.get(authorize_url(site, client, verifier(), redirect_uri=REDIRECT + "2"))
    assert error(answer) == "invalid_request"
