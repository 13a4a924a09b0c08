"""An HTTP server inside the test process, on loopback, for what a test stands in for
(an endpoint that records what it received, pages a browser loads, a mirror)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def http_server(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    """``handler`` served from a thread on a free ``127.0.0.1`` port (``server_address[1]``)
    until the block ends; then the server is shut down and its socket closed."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
