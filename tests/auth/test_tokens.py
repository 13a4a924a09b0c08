"""The principal a token binds to: users (``sub``) and clients on their own behalf
(``client_id`` alone) never share one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.auth import InvalidToken
from snodo.auth.tokens import subject_of

names = st.text(min_size=1, max_size=12) | st.sampled_from(
    ["alice", "client:alice", "sub:alice", "sub:client:alice", "client:", "sub:"]
)
tokens = st.one_of(
    st.builds(lambda sub, cid: {"sub": sub, "client_id": cid}, names, names | st.none()),
    st.builds(lambda cid: {"client_id": cid}, names),
)


def test_a_user_and_a_client_of_the_same_name_are_two_principals() -> None:
    assert subject_of({"sub": "alice"}) == "alice"
    assert subject_of({"sub": "alice", "client_id": "app"}) == "alice"
    assert subject_of({"client_id": "alice"}) == "client:alice"
    assert subject_of({"sub": "client:alice"}) == "sub:client:alice"
    assert subject_of({"sub": "", "client_id": "alice"}) == "client:alice"
    with pytest.raises(InvalidToken):
        subject_of({"client_id": ""})


@given(tokens, tokens)
def test_principals_are_equal_only_for_the_same_kind_and_name(
    one: dict[str, Any], two: dict[str, Any]
) -> None:
    def who(claims: dict[str, Any]) -> tuple[str, str]:
        return ("user", claims["sub"]) if "sub" in claims else ("client", claims["client_id"])

    assert (subject_of(one) == subject_of(two)) == (who(one) == who(two))
