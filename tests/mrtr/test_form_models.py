"""Forms from a pydantic model or a dataclass: the restricted schema they compile to, on
the wire; an accepted answer as an instance of the model; what the subset cannot say
refused when the form is built, naming the model and field."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import ipaddress
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, field_validator

from snodo import Ask, Server, elicitation
from snodo.core.context import Context
from snodo.core.input_responses import question_digest
from tests.support.wire import answer, request


class Room(enum.Enum):
    SINGLE = "single"
    DOUBLE = "double"


class Booking(BaseModel):
    city: str = Field(title="City", description="Where to", min_length=2, max_length=40)
    nights: int = Field(default=1, ge=1, le=30)
    arrival: datetime.date
    breakfast: bool = False
    room: Room = Room.DOUBLE
    budget: float | None = None
    extras: list[Literal["parking", "spa"]] = Field(default_factory=list, max_length=2)

    @field_validator("city")
    @classmethod
    def no_atlantis(cls, value: str) -> str:
        if value == "Atlantis":
            raise ValueError("no such city")
        return value


@dataclasses.dataclass
class Contact:
    email: Annotated[str, Field(json_schema_extra={"format": "email"})]
    newsletter: bool = True


BOOKING = elicitation.form("Book a room?", Booking)
CONTACT = elicitation.form("How do we reach you?", Contact)


def test_a_model_compiles_to_the_restricted_schema() -> None:
    assert BOOKING == {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Book a room?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "city": {
                        "type": "string",
                        "title": "City",
                        "description": "Where to",
                        "minLength": 2,
                        "maxLength": 40,
                    },
                    "nights": {"type": "integer", "default": 1, "minimum": 1, "maximum": 30},
                    "arrival": {"type": "string", "format": "date"},
                    "breakfast": {"type": "boolean", "default": False},
                    "room": {"type": "string", "enum": ["single", "double"], "default": "double"},
                    "budget": {"type": "number"},
                    "extras": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["parking", "spa"]},
                        "maxItems": 2,
                    },
                },
                "required": ["city", "arrival"],
            },
        },
    }


def test_a_dataclass_compiles_too() -> None:
    assert CONTACT["params"]["requestedSchema"] == {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "newsletter": {"type": "boolean", "default": True},
        },
        "required": ["email"],
    }


def read(form: Any, content: dict[str, Any]) -> Any:
    digest = question_digest(form)
    ctx = Context(
        request_id=1,
        request_method="tools/call",
        request_params={},
        protocol_version="2026-07-28",
        client_capabilities={"elicitation": {}},
        input_responses={"k": {"action": "accept", "content": content}},
        asked={"k": digest},
    )
    return elicitation.response(ctx, "k", form)


def test_an_accepted_answer_is_an_instance_of_the_model() -> None:
    got = read(BOOKING, {"city": "Oslo", "arrival": "2026-12-24", "extras": ["spa"]})
    assert isinstance(got, elicitation.Accepted)
    assert got.content == Booking(city="Oslo", arrival=datetime.date(2026, 12, 24), extras=["spa"])
    assert got.content.room is Room.DOUBLE and got.content.nights == 1
    contact = read(CONTACT, {"email": "ada@example.com"})
    assert contact.content == Contact("ada@example.com", True)


def test_an_answer_the_schema_or_the_model_refuses_is_invalid_params() -> None:
    from snodo.core.errors import InvalidParams

    for content in (
        {"city": "O", "arrival": "2026-12-24"},  # minLength, by the schema
        {"city": "Oslo", "arrival": "2026-02-30"},  # not a calendar date
        {"city": "Atlantis", "arrival": "2026-12-24"},  # the model's own validator
    ):
        with pytest.raises(InvalidParams, match="Invalid elicitation response for 'k'"):
            read(BOOKING, content)


class Address(BaseModel):
    street: str


class Nested(BaseModel):
    address: Address


class Listed(BaseModel):
    people: list[Address]


class Either(BaseModel):
    value: int | str


class Mapped(BaseModel):
    tags: dict[str, str]


class Exclusive(BaseModel):
    count: int = Field(gt=0)


class Patterned(BaseModel):
    code: str = Field(pattern="^[A-Z]+$")


class Addressed(BaseModel):
    ip: ipaddress.IPv4Address


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (Nested, "form Nested: field 'address': a nested object cannot be a form field"),
        (Listed, "form Listed: field 'people': a list in a form is a list of string choices"),
        (Either, "form Either: field 'value': a union cannot be a form field (only T | None)"),
        (Mapped, "form Mapped: field 'tags': a nested object cannot be a form field"),
        (Exclusive, "form Exclusive: field 'count': exclusiveMinimum cannot be said in a form"),
        (Patterned, "form Patterned: field 'code': pattern cannot be said in a form"),
        (Addressed, "form Addressed: field 'ip': format 'ipv4' cannot be said in a form"),
    ],
)
def test_what_the_subset_cannot_say_is_refused_when_the_form_is_built(
    model: type, message: str
) -> None:
    with pytest.raises(ValueError) as raised:
        elicitation.form("?", model)
    assert str(raised.value) == message


def test_a_declared_ask_gets_the_instance_or_one_field_of_it() -> None:
    server = Server("typed-forms", "1")
    seen: list[Any] = []

    @server.tool
    def book(
        booking: Annotated[Booking | None, Ask(BOOKING)],
        email: Annotated[str | None, Ask(CONTACT, pick="email")],
    ) -> str:
        seen.extend([booking, email])
        return "booked" if booking else "not booked"

    caps = {"elicitation": {}}
    first = answer(
        server, request("tools/call", {"name": "book", "arguments": {}}, id=1, capabilities=caps)
    )["result"]
    retry = {
        "name": "book",
        "arguments": {},
        "inputResponses": {
            "booking": {"action": "accept", "content": {"city": "Oslo", "arrival": "2026-12-24"}},
            "email": {"action": "accept", "content": {"email": "ada@example.com"}},
        },
        "requestState": first["requestState"],
    }
    done = answer(server, request("tools/call", retry, id=2, capabilities=caps))["result"]
    assert done["content"] == [{"type": "text", "text": "booked"}]
    assert isinstance(seen[0], Booking) and seen[0].city == "Oslo"
    assert seen[1] == "ada@example.com"
