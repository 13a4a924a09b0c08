"""MCP Apps (the ``ui`` extension, ``EXTENSION_ID``): a tool with an
interactive view.

Its server half (``server``): ``App(server, uri, html)`` registers a view and
``@view.tool`` the tools it shows, offering ``Apps`` at the server. Its client half
(``client``): ``Client(extensions=DECLARE)`` declares that a host renders views,
``offered``, ``tool_ui``, ``view_ui`` and ``model_tools`` read what a server says of
them. Its gateway half: ``passed()``, the extension offered at a gateway's front as the
servers behind declare it. Both halves check CSP values with ``csp.check_csp``.
"""

from snodo.extensions.apps.client import DECLARE, model_tools, offered, tool_ui, view_ui
from snodo.extensions.apps.csp import check_csp
from snodo.extensions.apps.server import APP_MIME_TYPE, EXTENSION_ID, App, Apps, renders_apps
from snodo.gateway.passing import Passing

__all__ = [
    "APP_MIME_TYPE",
    "DECLARE",
    "EXTENSION_ID",
    "App",
    "Apps",
    "check_csp",
    "model_tools",
    "offered",
    "passed",
    "renders_apps",
    "tool_ui",
    "view_ui",
]


def passed() -> Passing:
    """MCP Apps at a gateway's front (``proxy(connect, passing=[apps.passed()])``):
    advertised when a server behind declares it. Its views and tools pass as the
    feature methods do; which tools a caller sees is the backend's to say, from the
    front client's capabilities it forwards."""
    return Passing(EXTENSION_ID)
