"""Hypothesis strategies the property tests share."""

from __future__ import annotations

from hypothesis import strategies as st

scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
"""Any JSON value (no NaN or infinities), small enough to keep examples fast."""
