"""The extension's method table as the server routes it.

The rows come from the generated ``snodo_wire_tasks.tables.METHODS``, with one change:
tasks/update's params are checked for ``taskId`` alone before the engine sees them,
because the extension says answers to keys that are not outstanding are ignored, not
refused; the engine checks the answers it takes (``Tasks.update``).
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Final

from snodo.revisions.tasks import models
from snodo.revisions.tasks.tables import METHODS, MethodSpec

__all__ = ["TASK_METHODS"]

TASK_METHODS: Final[MappingProxyType[str, MethodSpec]] = MappingProxyType(
    {
        method: (
            replace(spec, params=models.GetTaskRequestParams)
            if spec.params is models.UpdateTaskRequestParams
            else spec
        )
        for method, spec in METHODS.items()
    }
)
