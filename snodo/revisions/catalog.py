"""The pinned core revisions and the extensions, newest first: what the registry loads.

Rendered from each revision's pin and overlay (``[package]`` name, era and served;
``[protocol] supported_versions``); ``python -m generator check`` compares it.
"""

from __future__ import annotations

# (version, package, era, served, supported_versions)
CATALOG: tuple[tuple[str, str, str, bool, tuple[str, ...]], ...] = (
    ("2026-07-28", "snodo_wire", "modern", True, ("2026-07-28",)),
    (
        "2025-11-25",
        "snodo_wire_2025_11_25",
        "legacy",
        True,
        ("2025-11-25", "2025-06-18", "2025-03-26"),
    ),
)
# (pin revision, package)
EXTENSIONS: tuple[tuple[str, str], ...] = (
    ("ext-tasks", "snodo_wire_tasks"),
    ("ext-apps", "snodo_wire_apps"),
)
