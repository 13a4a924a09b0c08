"""The registration surface: explicit keywords, each documented, misspellings refused
where the decorator is written, and each decorator's add_* twin registering the same."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from snodo.server import Server
from snodo.server.decorators import Decorators
from tests.support.wire import answer, request

DECORATORS = ("tool", "resource", "resource_template", "prompt")


@pytest.mark.parametrize(
    ("decorator", "args", "typo"),
    [
        ("tool", (), {"descripton": "x"}),
        ("resource", ("note://a",), {"mimetype": "text/plain"}),
        ("resource_template", ("note://{n}",), {"scope": ["x"]}),
        ("prompt", (), {"args": []}),
    ],
)
def test_a_misspelt_option_is_a_type_error_at_definition(
    decorator: str, args: tuple[Any, ...], typo: dict[str, Any]
) -> None:
    server = Server("s", "1")
    with pytest.raises(TypeError, match="unexpected keyword"):
        getattr(server, decorator)(*args, **typo)


@pytest.mark.parametrize("name", DECORATORS)
def test_every_option_is_a_keyword_with_a_line_of_its_own_in_the_docstring(name: str) -> None:
    method = getattr(Decorators, name)
    options = [
        p.name
        for p in inspect.signature(method).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    assert options and "name" in options
    assert not any(
        p.kind is inspect.Parameter.VAR_KEYWORD
        for p in inspect.signature(method).parameters.values()
    )
    doc = inspect.getdoc(method) or ""
    assert [o for o in options if f":param {o}:" not in doc] == []
    twin = getattr(Decorators, f"add_{'template' if name == 'resource_template' else name}")
    assert [p for p in inspect.signature(twin).parameters if p in options] == options


def test_the_add_twins_register_what_the_decorators_do() -> None:
    by_decorator, by_call = Server("s", "1"), Server("s", "1")

    def notes(ctx: Any) -> str:
        """All notes."""
        return "a, b"

    def note(name: str) -> str:
        return name

    def greet(who: str) -> str:
        return f"Hello {who}"

    def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return ["ada"]

    by_decorator.tool(title="Notes")(notes)
    by_decorator.resource("note://all", mime_type="text/plain")(notes)
    by_decorator.resource_template("note://{name}", name="note")(note)
    by_decorator.prompt(description="Greets")(greet)
    by_decorator.completion("ref/prompt", "greet")(complete)
    by_call.add_tool(notes, title="Notes")
    by_call.add_resource(notes, "note://all", mime_type="text/plain")
    by_call.add_template(note, "note://{name}", name="note")
    by_call.add_prompt(greet, description="Greets")
    by_call.add_completion("ref/prompt", "greet", complete)
    for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
        assert answer(by_call, request(method)) == answer(by_decorator, request(method))
    completion = request(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "a"}},
    )
    assert answer(by_call, completion) == answer(by_decorator, completion)
    assert answer(by_call, completion)["result"]["completion"]["values"] == ["ada"]
