"""Fetching a client-id metadata document for a stranger without lending them the
server's place on the network.

Anyone may name a URL as its client id, and the server then fetches it: that is where
a stranger would aim the server at what only it can reach (a cloud metadata address, a
port on its own loopback, a host of the private network) or read its answers as a port
scanner. So a document is fetched only:

- over ``https:``; ``http:`` on a loopback host, and loopback addresses at all, only with
  the development setting ``OAuthProxy(loopback_documents=True)``;
- from a public unicast address: the host is resolved here and every address it has is
  checked (no private, loopback, link-local, shared, reserved or multicast address, nor
  one wrapped in an IPv6 form), then the connection is made to the address checked,
  the name still sent for TLS and in ``Host``, so a second resolution cannot answer
  otherwise;
- without following a redirect, through no proxy named by the environment, and without
  compression (a small compressed body can inflate to any size);
- up to ``max_bytes`` bytes, and all of it within ``timeout`` seconds.

Every failure is one ``DocumentUnusable``: the client is told only that the document
could not be used, whatever the reason, which goes to the server's log.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import urllib.parse
from dataclasses import dataclass

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.proxy_documents needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

__all__ = ["DocumentFetcher", "DocumentUnusable", "public_address"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
"""IPv4 addresses reached through a NAT64 gateway: the IPv4 address is what counts."""


class DocumentUnusable(Exception):
    """A document that could not be fetched or used; the message is for the log only."""


def _embedded(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, 6to4, Teredo, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def public_address(address: Address, *, loopback: bool = False) -> bool:
    """Whether the server may fetch a stranger's document from ``address``: a global
    unicast address (with ``loopback``, a loopback one too), looked through IPv6 forms
    that carry an IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded(address)
        if inner is not None:
            return public_address(inner, loopback=loopback)
    if loopback and address.is_loopback:
        return True
    return address.is_global and not address.is_multicast


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _loopback_name(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class DocumentFetcher:
    """Fetches client-id metadata documents within the rules above."""

    max_bytes: int = 16 * 1024
    timeout: float = 5.0
    loopback: bool = False
    """Development only: loopback addresses, and ``http:`` on a loopback host."""
    tls: ssl.SSLContext | None = None
    """The roots a document's server is checked against (None: httpx's default)."""

    async def fetch(self, url: str) -> bytes:
        """The document's bytes; ``DocumentUnusable`` for anything else."""
        try:
            async with asyncio.timeout(self.timeout):
                return await self._fetch(url)
        except TimeoutError:
            raise DocumentUnusable(f"not fetched within {self.timeout:g} s") from None
        except (httpx.HTTPError, OSError, ssl.SSLError, ValueError) as exc:
            raise DocumentUnusable(f"not fetched: {type(exc).__name__}") from None

    async def _fetch(self, url: str) -> bytes:
        parts = urllib.parse.urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname
        if not host or parts.username is not None or parts.password is not None:
            raise DocumentUnusable("not a URL a document may be fetched from")
        if scheme == "http":
            if not (self.loopback and _loopback_name(host)):
                raise DocumentUnusable("http: only on a loopback host, with loopback_documents")
        elif scheme != "https":
            raise DocumentUnusable("not an https: URL")
        port = parts.port or (443 if scheme == "https" else 80)
        address = await self._address(host, port)
        named = f"[{address}]" if ":" in address else address
        target = urllib.parse.urlunsplit((scheme, f"{named}:{port}", parts.path, parts.query, ""))
        headers = {
            "host": parts.netloc,
            "accept": "application/json",
            "accept-encoding": "identity",
        }
        extensions = {} if _literal(host) else {"sni_hostname": host}
        async with (
            httpx.AsyncClient(
                verify=self.tls or True,
                trust_env=False,
                follow_redirects=False,
                timeout=self.timeout,
            ) as http,
            http.stream("GET", target, headers=headers, extensions=extensions) as response,
        ):
            if response.status_code != 200:
                raise DocumentUnusable(f"answered {response.status_code}")
            if response.headers.get("content-encoding", "identity").lower() != "identity":
                raise DocumentUnusable("answered compressed")
            declared = response.headers.get("content-length", "0")
            if not declared.isdigit() or int(declared) > self.max_bytes:
                raise DocumentUnusable(f"declared over {self.max_bytes} bytes")
            body = bytearray()
            async for chunk in response.aiter_raw():
                body += chunk
                if len(body) > self.max_bytes:
                    raise DocumentUnusable(f"over {self.max_bytes} bytes")
            return bytes(body)

    async def _address(self, host: str, port: int) -> str:
        """The address to connect to: the first of the host's, once all are checked."""
        loop = asyncio.get_running_loop()
        found = await loop.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
        addresses = [str(info[4][0]).split("%")[0] for info in found]
        if not addresses:
            raise DocumentUnusable(f"{host} has no address")
        for address in addresses:
            if not public_address(ipaddress.ip_address(address), loopback=self.loopback):
                raise DocumentUnusable(f"{host} has an address that is not public")
        return addresses[0]
