"""The compiled build: ``SNODO_COMPILE=1`` compiles the core and the request path (mypyc).

Without it (the default, and every editable install or source distribution) the wheel is
pure Python. With it, the modules below become C extensions built from the same typed
source, which run every check of the request path: the core (``snodo/core/``, but for the
few ``PURE_CORE`` names with its reason) and the hot files above it. The rest stays Python
either way: ``Server`` (programs set attributes of their own on it; its request path is
``core.request_path``, compiled), the public elicitation functions (a compiled signature
would answer a wrong type before their own checks do), ``server.invoke`` (compiled, a call
cancelled while its dependencies closed crashed the interpreter), the client, OAuth, the CLI
and the generated models. The in-tree backend (``build_backend/snodo_build.py``) adds mypyc
to the build's requirements only when asked for.
"""

from __future__ import annotations

import os

from setuptools import setup

COMPILED = [
    # The core (snodo/core/), all of it but PURE_CORE below.
    "snodo/core/admission.py",
    "snodo/core/capabilities.py",
    "snodo/core/envelope.py",
    "snodo/core/http_headers.py",
    "snodo/core/input_responses.py",
    "snodo/core/jsonrpc.py",
    "snodo/core/plain_params.py",
    "snodo/core/request_path.py",
    "snodo/core/result.py",
    "snodo/core/state/canonical.py",
    "snodo/core/state/keys.py",
    "snodo/core/state/sealing.py",
    "snodo/core/state/token.py",
    # The hot files above it: a tools/call's way from the HTTP transport to the handler.
    "snodo/asking/form_schema.py",
    "snodo/server/methods.py",
    "snodo/server/registry.py",
    "snodo/server/schemas.py",
    "snodo/server/tools.py",
    "snodo/transports/http.py",
    "snodo/transports/http_exchange.py",
    "snodo/transports/http_head.py",
    "snodo/transports/late_requests.py",
]
"""What a tools/call, resources/read or prompts/get request runs through, transport to
answer (``bench/instructions.py`` counts the difference)."""

PURE_CORE = {
    "snodo/core/__init__.py": "the package's docstring, nothing to run",
    "snodo/core/caching.py": "CacheHint, which programs make and whose own checks name "
    "the bad value; a compiled constructor would refuse a wrong type first",
    "snodo/core/context.py": "the compiled request path makes Context instances with "
    "object.__new__ and fills their __dict__ in one step, which a native class refuses",
    "snodo/core/errors.py": "each error's code and message are class attributes its "
    "subclasses (programs' own among them) override, which a compiled exception does not "
    "read; errors are off the usual path anyway",
    "snodo/core/input_requests.py": "the frozen request a builder returns subclasses dict "
    "and list, which mypyc does not compile as native classes",
    "snodo/core/observe.py": "the observer protocols and QUIET, whose identity the "
    "request path checks; nothing in it runs per request",
    "snodo/core/types.py": "protocols, and OpenStream, which the server's Subscription "
    "(Python) subclasses: a compiled class cannot be subclassed in Python",
    "snodo/core/state/replay.py": "a guard's public consume checks the types of what a "
    "program passes with messages of its own, which a compiled signature would pre-empt",
    "snodo/core/state/__init__.py": "the package's names and its docstring, nothing to run",
    "snodo/core/state/keyring.py": "the public Keyring, the one API for sealing: a compiled "
    "signature would answer a wrong type before its own checks do",
}
"""The core's modules left as Python, each with why; ``tests/packaging`` checks that
every module of snodo/core/ is compiled or named here."""

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
