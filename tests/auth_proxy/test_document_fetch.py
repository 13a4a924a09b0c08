"""``snodo.auth.proxy_documents`` on its own: which addresses a stranger's document may
come from (an IPv4 address counts the same however IPv6 wraps it), and the connection
made to the address checked still proves the name over TLS and sends it as ``Host``."""

from __future__ import annotations

import asyncio
import ipaddress
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.auth.proxy_documents import DocumentFetcher, DocumentUnusable, public_address

PUBLIC = ["8.8.8.8", "1.1.1.1", "2001:4860:4860::8888", "::ffff:8.8.8.8", "2002:808:808::1"]
NOT_PUBLIC = [
    "127.0.0.1",
    "127.8.9.10",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, its client 127.0.0.1
]
LOOPBACK = {
    "127.0.0.1",
    "127.8.9.10",
    "::1",
    "::ffff:127.0.0.1",
    "2002:7f00:1::1",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",
}


@pytest.mark.parametrize("address", PUBLIC)
def test_public_unicast_addresses_are_fetched_from(address: str) -> None:
    assert public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_no_other_address_is(address: str) -> None:
    parsed = ipaddress.ip_address(address)
    assert not public_address(parsed)
    # The development setting adds loopback, and loopback only.
    assert public_address(parsed, loopback=True) == (address in LOOPBACK)


@given(st.integers(0, 2**32 - 1))
def test_an_ipv4_address_counts_the_same_however_ipv6_wraps_it(number: int) -> None:
    inner = ipaddress.IPv4Address(number)
    wrapped = [
        ipaddress.IPv6Address((0xFFFF << 32) | number),  # mapped
        ipaddress.IPv6Address((0x2002 << 112) | (number << 80) | 1),  # 6to4
        ipaddress.IPv6Address((0x64FF9B << 96) | number),  # NAT64
    ]
    for loopback in (False, True):
        expected = public_address(inner, loopback=loopback)
        assert [public_address(a, loopback=loopback) for a in wrapped] == [expected] * 3


def _certificate(tmp_path: Path, name: str) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}"),
            *("-addext", f"subjectAltName=DNS:{name}"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


async def _fetch_over_tls(cert: Path, key: Path, url: str) -> tuple[bytes, list[bytes]]:
    """``url`` (its port filled in) fetched from a TLS server holding ``cert``, the
    fetcher trusting that certificate; the body and the request heads the server read."""
    heads: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            heads.append(await reader.readuntil(b"\r\n\r\n"))
            body = b'{"client_id":"x"}'
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()

    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(cert, key)
    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=serving)
    port = server.sockets[0].getsockname()[1]
    fetcher = DocumentFetcher(loopback=True, tls=ssl.create_default_context(cafile=str(cert)))
    try:
        return await fetcher.fetch(url.format(port=port)), heads
    finally:
        server.close()


def test_the_name_is_proven_over_tls_at_the_address_checked(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path, "localhost")
    body, heads = asyncio.run(_fetch_over_tls(cert, key, "https://localhost:{port}/client.json"))
    assert body == b'{"client_id":"x"}'
    assert heads[0].startswith(b"GET /client.json HTTP/1.1\r\n")
    assert b"\r\nhost: localhost:" in heads[0].lower()
    # A certificate for another name, at the very same address, is refused.
    other, other_key = _certificate(tmp_path, "other.example")
    with pytest.raises(DocumentUnusable):
        asyncio.run(_fetch_over_tls(other, other_key, "https://localhost:{port}/client.json"))


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/client.json",  # http: anywhere but loopback, setting or not
        "ftp://example.com/client.json",
        "https://user:pw@localhost/client.json",
        "https://localhost:99999/client.json",
        "https://[::1/client.json",
    ],
)
def test_urls_that_are_not_fetched_at_all(url: str) -> None:
    with pytest.raises(DocumentUnusable):
        asyncio.run(DocumentFetcher(loopback=True).fetch(url))
