"""The registration surface: each kind's options declared once and each documented,
misspellings refused where the decorator is written, and each decorator's add_* twin
registering the same."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from snodo.server import Server, options
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
    with pytest.raises(TypeError, match=f"unexpected option.*{next(iter(typo))}"):
        getattr(server, decorator)(*args, **typo)
    add = f"add_{'template' if decorator == 'resource_template' else decorator}"
    with pytest.raises(TypeError, match="unexpected option"):
        getattr(server, add)(lambda: "x", *args, **typo)


KINDS = {
    "tool": options.ToolOptions,
    "resource": options.ResourceOptions,
    "resource_template": options.TemplateOptions,
    "prompt": options.PromptOptions,
}


@pytest.mark.parametrize("name", DECORATORS)
def test_each_kind_declares_its_options_once_and_documents_each(name: str) -> None:
    """The decorator and its add_* twin take the kind's one options mapping; every
    option has a line of its own in the docs of the mapping that declares it."""
    kind = KINDS[name]
    twin = getattr(Decorators, f"add_{'template' if name == 'resource_template' else name}")
    for method in (getattr(Decorators, name), twin):
        parameters = inspect.signature(method).parameters.values()
        keywords = [p for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
        assert [str(p.annotation) for p in keywords] == [f"Unpack[{kind.__name__}]"]
        assert not [p for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    own = set(kind.__annotations__) - set(options.ItemOptions.__annotations__)
    shared = set(options.ItemOptions.__annotations__)
    assert "name" in shared and own
    doc, module_doc = inspect.getdoc(kind) or "", options.__doc__ or ""
    assert [o for o in own if f"- ``{o}``:" not in doc] == []
    assert [o for o in shared if f"- ``{o}``:" not in module_doc] == []


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
