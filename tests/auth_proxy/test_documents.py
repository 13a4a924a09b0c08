"""Clients named by a client-id metadata document: an ``http:`` loopback URL here (an
``https:`` one elsewhere) that the proxy fetches and checks before trusting it, with
the development setting that allows loopback (``loopback_documents``); and what a
stranger cannot make the proxy do with such a URL: fetch from its own loopback or a
private address (without that setting), follow a redirect, read a document of any
size or for any time, fetch beyond the sign-in bounds, or tell one failure from another.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.auth_proxy.flows import REDIRECT, authorize_url, error, sign_in, token, verifier
from tests.auth_proxy.site import Site, proxied
from tests.support.idp import serve_app, serve_provider
from tests.support.processes import free_port

UNUSABLE = "the client's metadata document could not be used"
MIB = 1024 * 1024


class Documents:
    """Serves one JSON document per path, as a client's web site would; under
    ``/redirect/`` a redirect to the rest of the path, ``/endless/`` a body that never
    ends, ``/trickle/`` one byte every half second, ``/not-json/`` a page of HTML."""

    def __init__(self) -> None:
        self.url = ""
        self.documents: dict[str, Any] = {}
        self.fetches = 0
        self.paths: Counter[str] = Counter()
        self.sent: dict[str, int] = {}
        """Body bytes written per streamed path."""
        self.streams: dict[str, threading.Event] = {}
        """Per streamed path: set once it ended."""
        self.completed: dict[str, bool] = {}
        """Per streamed path that ended: whether it ran to its end (the reader stayed)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.fetches += 1
        path = scope["path"]
        self.paths[path] += 1
        if path.startswith(("/endless/", "/trickle/")):
            await self._stream(path, receive, send)
            return
        if path.startswith(("/redirect/", "/not-json/")):
            redirect = path.startswith("/redirect/")
            headers = [(b"location", path[len("/redirect") :].encode())] if redirect else []
            await send(
                {
                    "type": "http.response.start",
                    "status": 302 if redirect else 200,
                    "headers": [(b"content-type", b"text/html"), *headers],
                }
            )
            await send({"type": "http.response.body", "body": b"<html>hello</html>"})
            return
        document = self.documents.get(path)
        status = 404 if document is None else 200
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(document).encode()})

    async def _stream(self, path: str, receive: Any, send: Any) -> None:
        """Write until the reader goes, or 64 MiB or a minute are written."""
        self.streams[path] = ended = threading.Event()
        await receive()  # the request's (empty) body
        gone = asyncio.ensure_future(receive())  # then the reader's going
        start = {"type": "http.response.start", "status": 200}
        await send({**start, "headers": [(b"content-type", b"application/json")]})
        trickle = path.startswith("/trickle/")
        piece = b" " if trickle else b" " * 65536
        self.sent[path] = 0
        deadline = time.monotonic() + 60
        while not gone.done() and self.sent[path] < 64 * MIB and time.monotonic() < deadline:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            self.sent[path] += len(piece)
            await asyncio.sleep(0.5 if trickle else 0)
        self.completed[path] = not gone.done()
        ended.set()
        gone.cancel()

    def ran_to_its_end(self, path: str) -> bool:
        """Wait for the stream at ``path`` to end; whether its reader stayed to the end."""
        assert self.streams[path].wait(90), "the stream never ended"
        return self.completed[path]


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
        {"client_id": "SELF", "redirect_uris": [f"{REDIRECT}/{n}" for n in range(11)]},
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
    assert _refused(site, client) == UNUSABLE


def test_a_document_client_must_use_one_of_its_redirect_uris(
    site: Site, documents: Documents
) -> None:
    client = documents.url + "/strict.json"
    documents.documents["/strict.json"] = {"client_id": client, "redirect_uris": [REDIRECT]}
    answer = httpx.get(authorize_url(site, client, verifier(), redirect_uri=REDIRECT + "2"))
    assert error(answer) == "invalid_request"


def _refused(site: Site, client: str) -> str:
    """The description of the proxy's refusal of ``client``, at /authorize and at /token
    alike."""
    answer = httpx.get(authorize_url(site, client, verifier()), timeout=30)
    assert error(answer) == "invalid_client"
    assert "location" not in answer.headers
    described: str = answer.json()["error_description"]
    form = {"grant_type": "authorization_code", "code": "x", "client_id": client}
    at_token = token(site, redirect_uri=REDIRECT, code_verifier=verifier(), **form)
    assert error(at_token, 401) == "invalid_client"
    assert at_token.json()["error_description"] == described
    return described


def test_without_the_development_setting_nothing_on_loopback_or_private_is_fetched(
    documents: Documents,
) -> None:
    """The server's own loopback (open port or closed, by any spelling that resolves
    there) and private, link-local or unspecified addresses: refused before any
    connection, with the one text whatever the reason."""
    open_port = documents.url.rsplit(":", 1)[1]  # its server answers any path, 404 or not
    closed = free_port()
    clients = [
        f"http://127.0.0.1:{open_port}/client.json",
        f"http://127.0.0.1:{closed}/client.json",
        f"https://127.0.0.1:{open_port}/client.json",
        f"https://localhost:{open_port}/client.json",
        f"https://2130706433:{open_port}/client.json",  # 127.0.0.1, once resolved
        f"https://[::1]:{open_port}/client.json",
        f"https://[::ffff:127.0.0.1]:{open_port}/client.json",
        f"https://0.0.0.0:{open_port}/client.json",
        "https://10.0.0.1/client.json",
        "https://192.168.1.1/client.json",
        "https://169.254.169.254/latest/meta-data/client.json",
        "https://[fe80::1]/client.json",
        "https://[fd00::1]/client.json",
    ]
    before = documents.fetches
    with serve_provider() as idp, proxied(idp, loopback_documents=False) as strict:
        said = {_refused(strict, client) for client in clients}
    assert said == {UNUSABLE}
    assert documents.fetches == before


def test_every_failure_reads_the_same(site: Site, documents: Documents) -> None:
    """With loopback allowed (the development setting), a closed port, a page that is no
    document, a missing one and one naming another URL are told apart by nothing."""
    base = documents.url
    documents.documents["/elsewhere.json"] = {
        "client_id": "https://elsewhere.example/client.json",
        "redirect_uris": [REDIRECT],
    }
    clients = [
        f"http://127.0.0.1:{free_port()}/client.json",
        base + "/not-json/client.json",
        base + "/missing.json",
        base + "/elsewhere.json",
    ]
    assert {_refused(site, client) for client in clients} == {UNUSABLE}


def test_a_redirect_is_not_followed(site: Site, documents: Documents) -> None:
    target = "/followed.json"
    documents.documents[target] = {"client_id": "unused", "redirect_uris": [REDIRECT]}
    assert _refused(site, documents.url + "/redirect" + target) == UNUSABLE
    assert documents.paths[target] == 0


def test_a_document_is_read_no_further_than_its_size_bound(
    site: Site, documents: Documents
) -> None:
    path = "/endless/client.json"
    assert _refused(site, documents.url + path) == UNUSABLE
    # The reader went after its 16 KiB; what was written meanwhile sat in buffers.
    assert not documents.ran_to_its_end(path)
    assert documents.sent[path] < 16 * MIB


def test_a_trickled_document_is_given_up_on(documents: Documents) -> None:
    """One byte every half second for a minute: the fetch ends at its time bound, and
    /authorize answers long before the document would have ended."""
    path = "/trickle/client.json"
    limits = {"document_timeout": 1.0}
    with serve_provider() as idp, proxied(idp, limits=limits) as site:
        assert _refused(site, documents.url + path) == UNUSABLE
        assert not documents.ran_to_its_end(path)


def test_fetches_count_as_sign_ins_before_they_are_made(documents: Documents) -> None:
    """Each new document URL a stranger names is one sign-in begun from their address,
    counted before it is fetched: past the bound, nothing more is fetched."""
    limits = {"max_sign_ins_per_address": 3}
    with serve_provider() as idp, proxied(idp, limits=limits) as site:
        before = documents.fetches
        answers = [
            httpx.get(authorize_url(site, f"{documents.url}/count/{n}.json", verifier()))
            for n in range(5)
        ]
        assert [a.status_code for a in answers] == [400, 400, 400, 429, 429]
        assert answers[3].json()["error"] == "temporarily_unavailable"
        form = {"grant_type": "authorization_code", "code": "x"}
        form["client_id"] = f"{documents.url}/count/at-token.json"
        assert error(token(site, **form), 429) == "temporarily_unavailable"
        assert documents.fetches - before == 3
