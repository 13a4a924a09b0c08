"""Equality for JSON that tells 1 from 1.0 from True, as a wire comparison must."""

from __future__ import annotations

from typing import Any


def tagged(value: Any) -> Any:
    """The value with every scalar paired with its exact type."""
    if isinstance(value, dict):
        return {key: tagged(item) for key, item in value.items()}
    if isinstance(value, list):
        return [tagged(item) for item in value]
    return (type(value).__name__, value)
