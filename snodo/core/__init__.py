"""The protocol core: one message in, one reply out, with no I/O.

Everything that decides how a request is answered lives here, and only here: JSON-RPC
framing (``jsonrpc``), the ``_meta`` envelope (``envelope``), the revision's params
and answers checked (``input_responses``), the questions a handler asks checked against
what the client declared (``input_requests``, ``capabilities``, ``admission``), the
request ``Context``, results, errors, caching hints, the ``Mcp-*`` header mapping
(``http_headers``), the observer interface (``observe``), sealed request state
(``state``) and the request path itself (``request_path``).

The rule: the core imports only itself and ``snodo.revisions``. Features reach it only
through the method table and the ``Offering`` a server hands it (``types``); it never
hears of backends, tasks, MCP Apps, subscriptions or authorization.
"""
