"""The TLS context the client's own HTTP/1.1 (``http11``) reaches ``https://`` origins
with when the program gives none: the certificates the httpx path would check, so that
an origin trusted on one path is trusted on the other."""

from __future__ import annotations

import ssl

__all__ = ["default_tls"]


def default_tls() -> ssl.SSLContext:
    """Certificates checked against certifi's roots where installed (as httpx does),
    else the system's; HTTP/1.1 offered by ALPN."""
    try:
        import certifi  # noqa: PLC0415 - httpx's dependency, present with snodo[http]

        context = ssl.create_default_context(cafile=certifi.where())
    except ImportError:
        context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context
