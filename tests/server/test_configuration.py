"""``Server``'s rarely-set arguments come in five groups (``snodo.server.configuration``):
each reaches what it configures, a wrong value is one TypeError naming what to give,
and ``state_secret=`` is the only flat shortcut, never given beside ``state=``."""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any

import pytest

import snodo
from snodo import CacheHint, Caching, Limits, Publishing, Server, Spec, State
from snodo.core.state.keyring import Keyring
from snodo.server import configuration
from tests.support.state_vectors import DATA, Ctx
from tests.support.wire import answer, request

SECRET = bytes(range(32))
ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png"}
GROUPS = (State, Caching, Limits, Spec, Publishing)


def test_each_group_is_importable_from_snodo_and_documents_every_field() -> None:
    for group in GROUPS:
        assert getattr(snodo, group.__name__) is group
        doc = inspect.getdoc(group) or ""
        for field in dataclasses.fields(group):
            assert f"- ``{field.name}``" in doc, (group.__name__, field.name)


def test_every_server_parameter_has_its_line_in_the_docstring() -> None:
    doc = inspect.getdoc(Server) or ""
    listed = {name for line in doc.splitlines() for name in re.findall(r"``(\w+)``", line)}
    parameters = list(inspect.signature(Server.__init__).parameters)[1:]
    assert [p for p in parameters if p not in listed] == []
    assert parameters[-1] == "moved"  # **moved: the names the groups hold, refused
    assert len(parameters) - 1 <= 26  # help(Server) reads in a minute
    shown = str(inspect.signature(Server))  # defaults shown short: no object addresses
    assert "= LegacyLimits()," in shown and "= QUIET," in shown and " at 0x" not in shown


def test_a_group_is_frozen_and_takes_keywords_only() -> None:
    limits = Limits(page_size=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.page_size = 6  # type: ignore[misc]
    with pytest.raises(TypeError):
        Limits(5)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("argument", "given", "named"),
    [
        ("caching", CacheHint(60_000), "snodo.Caching(lists=..., read=..., discover=...)"),
        ("limits", 50, "snodo.Limits(page_size=..., listen_streams=..., threads=...)"),
        ("state", SECRET, "snodo.State(secret=..., keys=..., ttl=..."),
        ("spec", {"check_answers": True}, "snodo.Spec(revisions=..., capabilities=..."),
        ("publishing", "io.github.x/y", "snodo.Publishing(card_name=..., repository=..."),
    ],
)
def test_a_group_of_the_wrong_type_names_the_one_to_give(
    argument: str, given: Any, named: str
) -> None:
    with pytest.raises(TypeError) as refused:
        Server("s", "1", **{argument: given})
    message = str(refused.value)
    assert message.startswith(f"{argument}= takes {named}"), message
    assert type(given).__name__ in message


def test_state_secret_and_state_together_are_refused() -> None:
    with pytest.raises(TypeError, match=r"give state_secret=\.\.\. or state=State"):
        Server("s", "1", state_secret=SECRET, state=State(ttl=60))
    with pytest.raises(TypeError, match="not both"):
        Server("s", "1", state_secret=SECRET, state=State(secret=SECRET))


def test_the_shortcut_seals_as_the_group_does() -> None:
    """``state_secret=`` is ``state=State(secret=...)``: what one seals, the other opens."""
    short = Server("s", "1", state_secret=SECRET, state=None)
    whole = Server("s", "1", state=State(secret=SECRET))
    assert not short.state_per_process and not whole.state_per_process
    token = short.keyring.seal(DATA, Ctx(), once=False)
    assert whole.keyring.open(token, Ctx()) == DATA
    assert Keyring(secret=SECRET).open(token, Ctx()) == DATA


def test_state_reaches_the_keyring_and_the_clock() -> None:
    now = [1_000.0]
    server = Server("s", "1", state=State(secret=SECRET, ttl=60, guard=False, clock=lambda: now[0]))
    assert server.keyring.ttl == 60 and server.keyring.guard is None
    assert server.clock() == 1_000.0


def test_limits_reach_the_pages_the_streams_and_the_threads() -> None:
    server = Server("s", "1", limits=Limits(page_size=1, listen_streams=3, threads=2))
    assert server.offering.page_size == 1
    assert server.subscriptions.max_open == 3
    assert server.threads.limit == 2
    for name in ("a", "b"):
        server.add_tool(lambda: "x", name=name)
    listed = answer(server, request("tools/list", {}))["result"]
    assert [tool["name"] for tool in listed["tools"]] == ["a"] and "nextCursor" in listed
    with pytest.raises(ValueError, match=r"Limits\(threads=\.\.\.\) must be a positive"):
        Server("s", "1", limits=Limits(threads=0))


def test_caching_reaches_each_method_hint() -> None:
    lists, read = CacheHint(60_000, "public"), CacheHint(1_000)
    server = Server("s", "1", caching=Caching(lists={"tools/list": lists}, read=read))
    assert server.cache["tools/list"] == lists
    assert server.cache["prompts/list"] == CacheHint()
    assert server.cache["resources/read"] == read
    with pytest.raises(ValueError, match=r"Caching\(lists=\.\.\.\): 'tools/call' is not"):
        Server("s", "1", caching=Caching(lists={"tools/call": lists}))


def test_spec_reaches_the_answer_checks_and_the_flags() -> None:
    checked = Server("s", "1", spec=Spec(check_answers=True))
    assert checked.answer_checks is not None
    assert Server("s", "1", spec=Spec(check_answers=False)).answer_checks is None
    with pytest.raises(ValueError):
        Server("s", "1", spec=Spec(capabilities={"tools": {"madeUp": True}}))


def test_publishing_reaches_the_implementation_and_the_card() -> None:
    given = Publishing(
        card_name="io.github.example/s",
        repository="https://github.com/example/s",
        website_url="https://example.com",
        icons=[ICON],
    )
    server = Server("s", "1", publishing=given)
    assert server.info["websiteUrl"] == "https://example.com"
    assert server.info["icons"] == [ICON]
    assert (server.card_name, server.repository) == (given.card_name, given.repository)
    plain = Server("s", "1")
    assert "websiteUrl" not in plain.info and "icons" not in plain.info
    assert plain.card_name is None


def test_the_groups_live_apart_from_the_users_settings() -> None:
    """``Server(settings=...)`` is the model of what a user configures; the groups are
    another module's, with no name in common."""
    from snodo.server import settings

    assert not set(configuration.__all__) & set(settings.__all__)


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("page_size", "limits=Limits(page_size=...)"),
        ("list_page_size", "limits=Limits(page_size=...)"),
        ("state_guard", "state=State(guard=...)"),
        ("list_cache", "caching=Caching(lists=...)"),
        ("check_answers", "spec=Spec(check_answers=...)"),
        ("website_url", "publishing=Publishing(website_url=...)"),
        ("backend", "server.offering.serve_backend(...)"),
    ],
)
def test_a_setting_given_flat_is_refused_with_where_it_goes(name: str, where: str) -> None:
    with pytest.raises(TypeError) as refused:
        Server("s", "1", **{name: 1})
    assert str(refused.value) == f"Server({name}=...) is given as {where}"


def test_an_unknown_argument_is_named_as_python_names_it() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'colour'"):
        Server("s", "1", **{"colour": "blue"})


def test_a_wrong_group_never_shows_its_values() -> None:
    with pytest.raises(TypeError) as refused:
        Server("s", "1", state={"secret": SECRET})  # type: ignore[arg-type]
    assert "['secret']" in str(refused.value)
    assert repr(SECRET) not in str(refused.value)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Caching(read=60_000), r"Caching\(read=\.\.\.\) takes a CacheHint"),
        (lambda: Caching(discover="60s"), r"Caching\(discover=\.\.\.\) takes a CacheHint"),
        (lambda: Caching(lists=60), r"Caching\(lists=\.\.\.\) takes a CacheHint"),
        (lambda: Caching(lists={"tools/call": CacheHint(1)}), "'tools/call' is not one of"),
        (lambda: Limits(page_size=0), r"Limits\(page_size=\.\.\.\) must be a positive"),
        (lambda: Limits(page_size=-1), r"Limits\(page_size=\.\.\.\) must be a positive"),
        (lambda: Limits(page_size=True), r"Limits\(page_size=\.\.\.\) must be a positive"),
        (lambda: Limits(page_size=2.5), r"Limits\(page_size=\.\.\.\) must be a positive"),
        (lambda: Limits(listen_streams=-5), r"Limits\(listen_streams=\.\.\.\) must be"),
        (lambda: Spec(check_answers="yes"), r"Spec\(check_answers=\.\.\.\) takes True"),
    ],
)
def test_a_bad_value_in_a_group_fails_when_it_is_made(make: Any, message: str) -> None:
    """Not on a request: ``Caching(read=60_000)`` would answer every read -32603, and a
    page size of 0 sends a client round the same cursor."""
    with pytest.raises((TypeError, ValueError), match=message):
        make()


def test_the_page_size_set_later_is_checked_too() -> None:
    server = Server("s", "1")
    with pytest.raises(ValueError, match="positive integer"):
        server.page_size = 0
    server.page_size = 2
    assert server.offering.page_size == 2
