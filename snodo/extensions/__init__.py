"""The extensions snodo ships, each with its server, client, gateway and observability
halves together: ``apps`` (MCP Apps), ``skills`` (Skills) and ``tasks`` (Tasks), on the
public extension APIs of the server (``snodo.server.extensions``), the client
(``snodo.client.extensions``) and the gateway (``snodo.gateway.passing``).

The package is a role above the server, the client and the gateway: it may import
them, the core and every package below them; none of them imports it. The generated
wire packages of the extensions stay in the revision registry (``snodo.revisions``).
``gateway_halves()`` is what ``snodo proxy`` passes on.
"""

from snodo.extensions import apps, skills, tasks
from snodo.extensions.apps import App
from snodo.extensions.skills import Skills, SkillsClient
from snodo.extensions.tasks import Tasks
from snodo.gateway.passing import Passing

__all__ = ["App", "Skills", "SkillsClient", "Tasks", "apps", "gateway_halves", "skills", "tasks"]


def gateway_halves() -> list[Passing]:
    """The gateway half of every extension snodo ships, new for one gateway:
    ``proxy(connect, passing=gateway_halves())`` passes each on as the servers behind
    declare it."""
    return [apps.passed(), skills.passed()]
