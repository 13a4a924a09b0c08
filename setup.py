"""The compiled build: ``SNODO_COMPILE=1`` compiles the request path with mypyc.

Without it (the default, and every editable install or source distribution) the wheel
is pure Python. With it, the modules below become C extensions built from the same typed
source, which run every check of the request path. The rest stays Python either way:
``Server`` (programs set attributes of their own on it; its request path is
``server.answering``, compiled), ``Context`` (a Python class whose instances the
compiled request path makes with ``object.__new__`` and fills in one step), the public
state, keyring and elicitation functions (a compiled signature would answer a wrong type
before their own checks do), ``server.invoke`` (compiled, a call cancelled while its
dependencies closed crashed the interpreter), the client, OAuth, the CLI and the
generated models. The in-tree backend (``build_backend/snodo_build.py``) adds mypyc to
the build's requirements only when asked for.
"""

from __future__ import annotations

import os

from setuptools import setup

COMPILED = [
    "snodo/core/admission.py",
    "snodo/core/input_responses.py",
    "snodo/core/capabilities.py",
    "snodo/asking/form_schema.py",
    "snodo/core/http_headers.py",
    "snodo/core/jsonrpc.py",
    "snodo/core/plain_params.py",
    "snodo/core/result.py",
    "snodo/core/request_path.py",
    "snodo/server/methods.py",
    "snodo/core/envelope.py",
    "snodo/server/registry.py",
    "snodo/server/schemas.py",
    "snodo/server/tools.py",
    "snodo/core/state/canonical.py",
    "snodo/core/state/keys.py",
    "snodo/core/state/sealing.py",
    "snodo/core/state/token.py",
    "snodo/transports/http.py",
    "snodo/transports/http_exchange.py",
    "snodo/transports/http_head.py",
    "snodo/transports/late_requests.py",
]
"""What a tools/call, resources/read or prompts/get request runs through, transport to
answer (``bench/instructions.py`` counts the difference)."""

WANTED = os.environ.get("SNODO_COMPILE", "")
if WANTED not in ("", "0", "1"):
    raise SystemExit(f"SNODO_COMPILE is 1 (compile) or 0 (pure Python), not {WANTED!r}")
if WANTED == "1":
    from mypyc.build import mypycify

    # The type check mypyc compiles from reads no configuration file: with the project's
    # pydantic plugin for mypy, the create_model call in tools.py compiles to code that
    # fails. pydantic comes with mypy into the build's environment; any other package
    # the sources import that the environment lacks is read as untyped, not an error.
    # The generated wire packages are beside the runtime.
    os.environ["MYPYPATH"] = "generated"
    options = ["--config-file=", "--ignore-missing-imports"]
    extensions = mypycify([*options, *COMPILED], opt_level="3", group_name="snodo")
    setup(ext_modules=extensions)
else:
    setup()
