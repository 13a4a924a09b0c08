"""The distribution's Chromium for the tests that drive a real browser with Playwright."""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
"""Its path, or None where it is not installed (those tests skip)."""
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""The flags a root user on a closed network needs (no sandbox, no background calls)."""
