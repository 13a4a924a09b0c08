"""generator/ordering.py: models written after what they name, literal in and out."""

from __future__ import annotations

import textwrap

from generator.ordering import dependency_order

BEFORE = """\
# a header comment
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypeAliasType


class Request(BaseModel):
    method: Literal["Params"]
    params: "Params"
    meta: Annotated["Meta" | None, Field(alias="_meta", description="Meta")] = None


# said of Params
class Params(BaseModel):
    value: "Value"
    meta: "Meta"


class Meta(BaseModel):
    pass


Value = TypeAliasType("Value", "str | Json")
Json = TypeAliasType("Json", "dict[str, Value]")
Request.model_rebuild()
Params.model_rebuild()
"""

AFTER = """\
# a header comment
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypeAliasType


class Meta(BaseModel):
    pass


Value = TypeAliasType("Value", "str | Json")


# said of Params
class Params(BaseModel):
    value: Value
    meta: Meta


class Request(BaseModel):
    method: Literal["Params"]
    params: Params
    meta: Annotated[Meta | None, Field(alias="_meta", description="Meta")] = None
Json = TypeAliasType("Json", "dict[str, Value]")
"""
"""The blank lines between statements are ruff's: the generator formats the module next."""


def test_each_statement_follows_what_it_names_quotes_and_rebuilds_gone() -> None:
    """Moved whole with the comment before it; the names unquoted in field types but
    not a Literal's value, an alias or a description; the two type aliases of a cycle
    kept in their order and quoted (``Json`` only where nothing waits for it); no
    rebuild left."""
    assert dependency_order(BEFORE) == AFTER


def test_a_model_in_a_cycle_keeps_its_quotes_and_its_rebuild() -> None:
    source = textwrap.dedent(
        """\
        class Node(BaseModel):
            children: list["Tree"]


        class Tree(BaseModel):
            root: Node


        Node.model_rebuild()
        """
    )
    assert dependency_order(source) == source


def test_an_ordered_module_is_left_as_it_is() -> None:
    assert dependency_order(AFTER) == AFTER
