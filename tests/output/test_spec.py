"""Output types as JSON Schemas and validators (``toolwire.output.spec``)."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pydantic
import pytest
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from toolwire.errors import CallerError
from toolwire.output import OutputSpec, constructs


class City(pydantic.BaseModel):
    """A city and how many live there."""

    name: str
    population: int


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Pair(TypedDict):
    left: str
    right: str


class Node(pydantic.BaseModel):
    value: int
    children: list[Node] = []


class Cat(pydantic.BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(pydantic.BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(pydantic.BaseModel):
    pet: Cat | Dog = pydantic.Field(discriminator="kind")


@pytest.mark.parametrize("kind", [City, Point, Pair])
def test_an_object_type_is_the_parameters_schema_itself(kind: type) -> None:
    spec = OutputSpec.of(kind)
    assert not spec.wrapped
    assert spec.schema["type"] == "object"
    assert "result" not in spec.schema["properties"]


@pytest.mark.parametrize(
    ("kind", "arguments", "value"),
    [
        (int, {"result": 3}, 3),
        (list[str], {"result": ["a", "b"]}, ["a", "b"]),
        (str | int, {"result": 4}, 4),
        (dict[str, int], {"result": {"a": 1}}, {"a": 1}),
    ],
)
def test_a_plain_type_is_wrapped_under_result_and_unwrapped(
    kind: object, arguments: dict[str, object], value: object
) -> None:
    spec = OutputSpec.of(kind)
    assert spec.wrapped
    assert spec.schema["required"] == ["result"]
    assert spec.validate(arguments) == value


def test_validation_gives_instances_and_names_the_field() -> None:
    assert OutputSpec.of(City).validate({"name": "Oslo", "population": 7}) == City(
        name="Oslo", population=7
    )
    assert OutputSpec.of(Point).validate({"x": 1, "y": 2}) == Point(1.0, 2.0)
    with pytest.raises(pydantic.ValidationError) as info:
        OutputSpec.of(int).validate({"result": "many"})
    assert info.value.errors()[0]["loc"] == ("result",)


def test_the_description_carries_the_types_own_docstring_only() -> None:
    assert "how many live there" in OutputSpec.of(City).description
    assert "Point(" not in OutputSpec.of(Point).description


def test_a_type_without_a_schema_is_the_callers_error() -> None:
    with pytest.raises(CallerError) as info:
        OutputSpec.of(object())
    assert "output_type=" in str(info.value) and info.value.fault == "caller"


def test_constructs_finds_recursion_and_discriminated_unions() -> None:
    assert "recursive" in constructs(OutputSpec.of(Node).schema)
    assert "oneOf" in constructs(OutputSpec.of(Pet).schema)
    assert constructs(OutputSpec.of(City).schema) == set()


def test_the_strict_schema_requires_every_property() -> None:
    class Report(pydantic.BaseModel):
        title: str
        note: str | None = None

    strict = OutputSpec.of(Report).strict_schema()
    assert sorted(strict["required"]) == ["note", "title"]
    assert strict["additionalProperties"] is False


def test_strict_nulls_of_optional_fields_without_null_are_dropped() -> None:
    class Report(pydantic.BaseModel):
        title: str
        pages: int = 1
        note: str | None = "n"

    spec = OutputSpec.of(Report)
    answer = {"title": "t", "pages": None, "note": None}
    assert spec.validate(spec.drop_strict_nulls(answer)) == Report(title="t", pages=1, note=None)
