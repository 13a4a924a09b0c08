"""Hypothesis strategies the property tests share."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def json_scalars(*, infinities: bool = True, text_size: int = 10) -> st.SearchStrategy[Any]:
    return (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=infinities)
        | st.text(max_size=text_size)
    )


def json_trees(
    leaves: st.SearchStrategy[Any], *, width: int = 4, key_size: int = 6, max_leaves: int = 12
) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=width)
            | st.dictionaries(st.text(max_size=key_size), inner, max_size=width)
        ),
        max_leaves=max_leaves,
    )


scalars = json_scalars()
"""Scalars a peer may send, infinities included (``json.dumps`` writes them as non-JSON
``Infinity``, which a strict parser must refuse); never NaN."""
json_values = json_trees(scalars)
"""Any value a peer may send, small enough to keep examples fast."""
strict_json_values = json_trees(
    json_scalars(infinities=False, text_size=20), width=5, key_size=8, max_leaves=25
)
"""Values strict JSON can carry (no NaN or infinities): what must round-trip exactly."""
