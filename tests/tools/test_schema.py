"""Schema generation from type hints, definition-time errors and strict mode."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolwire.errors import CallerError, ToolDefinitionError
from toolwire.tools import strict_schema, tool


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    zip: str = "00000"


class Flags(TypedDict):
    verbose: bool


def test_types_become_json_schema():
    @tool
    def f(
        name: str,
        count: Annotated[int, Field(ge=1, le=5)],
        mode: Literal["fast", "slow"] = "fast",
        color: Color = Color.RED,
        note: str | None = None,
        tags: list[str] | None = None,
        weights: dict[str, float] | None = None,
        address: Address | None = None,
        flags: Flags | None = None,
    ) -> None:
        """F.

        Args:
            name: The name.
        """

    schema = f.parameters
    props = schema["properties"]
    assert schema["type"] == "object"
    assert schema["required"] == ["name", "count"]
    assert schema["additionalProperties"] is False
    assert props["name"] == {"type": "string", "description": "The name."}
    assert props["count"] == {"type": "integer", "minimum": 1, "maximum": 5}
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert schema["$defs"]["Color"]["enum"] == ["red", "blue"]
    assert {"type": "null"} in props["note"]["anyOf"]
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert props["weights"]["anyOf"][0]["additionalProperties"] == {"type": "number"}
    assert "Address" in schema["$defs"] and "Flags" in schema["$defs"]
    assert "title" not in schema and "title" not in props["name"]


def test_parameter_named_like_basemodel_attributes():
    @tool
    def f(json: str, schema: int = 1, copy: bool = False) -> None:
        """F."""

    assert list(f.parameters["properties"]) == ["json", "schema", "copy"]
    assert f.validate('{"json": "x", "schema": 2}').input == {"json": "x", "schema": 2}


def test_unannotated_parameter_is_a_definition_error_naming_it():
    with pytest.raises(ToolDefinitionError, match=r"parameter 'x' of .*no type annotation") as info:

        @tool
        def f(x) -> None:  # type: ignore[no-untyped-def]
            """F."""

    assert info.value.parameter == "x" and "typing.Any" in info.value.hint


def test_any_annotation_accepts_any_json_value():

    @tool
    def f(x: Any) -> None:
        """F."""

    assert f.validate('{"x": [1, {"a": null}]}').input == {"x": [1, {"a": None}]}


def test_validate_given_a_dict_is_a_caller_error():
    from toolwire.errors import CallerError

    @tool
    def f(x: int) -> None:
        """F."""

    with pytest.raises(CallerError, match="JSON text, not a dict"):
        f.validate({"x": 1})  # type: ignore[arg-type]
    assert f.validate(parsed={"x": 1}).ok


class Opaque:
    pass


def test_unsupported_annotation_names_function_and_parameter():
    with pytest.raises(ToolDefinitionError) as info:

        @tool
        def bad(ok: int, thing: Opaque) -> None:
            """Bad."""

    assert isinstance(info.value, CallerError)
    assert info.value.parameter == "thing"
    assert "bad" in str(info.value) and "thing" in str(info.value)


def test_callable_annotation_is_rejected_at_definition():
    with pytest.raises(ToolDefinitionError) as info:

        @tool
        def bad(callback: Callable[[int], int]) -> None:
            """Bad."""

    assert info.value.parameter == "callback"


def test_unresolvable_forward_reference_names_the_parameter():
    class Local(BaseModel):
        x: int

    with pytest.raises(ToolDefinitionError, match="cannot resolve") as info:

        @tool
        def bad(ok: int, where: Local) -> None:
            """Bad."""

    assert info.value.parameter == "where"


def test_variadic_and_positional_only_are_rejected():
    with pytest.raises(ToolDefinitionError, match="args"):

        @tool
        def f(*items: int) -> None:
            """F."""

    with pytest.raises(ToolDefinitionError, match="positional-only"):

        @tool
        def g(x: int, /) -> None:
            """G."""


def test_strict_schema_closes_objects_and_requires_everything():
    @tool(strict=True)
    def f(a: int, b: int = 2, c: str | None = None, address: Address | None = None) -> None:
        """F.

        Args:
            b: The b.
        """

    params = f.parameters
    assert params["required"] == ["a", "b", "c", "address"]
    assert params["additionalProperties"] is False
    assert params["properties"]["b"] == {
        "description": "The b.",
        "anyOf": [{"type": "integer"}, {"type": "null"}],
    }
    address = params["$defs"]["Address"]
    assert address["required"] == ["street", "zip"]
    assert address["additionalProperties"] is False
    assert "default" not in str(params)
    assert f.definition()["function"]["strict"] is True


def test_strict_schema_leaves_data_keywords_alone():
    schema = {
        "type": "object",
        "properties": {"k": {"enum": [{"properties": 1, "default": 2}], "default": 3}},
    }
    out = strict_schema(schema)
    assert out["properties"]["k"]["anyOf"][0]["enum"] == [{"properties": 1, "default": 2}]
    assert schema["properties"]["k"]["default"] == 3  # the input is not modified


def test_strict_validation_drops_null_for_optional_parameters():
    @tool(strict=True)
    def f(a: int, b: int = 2, c: int | None = 5) -> Any:
        """F."""
        return (a, b, c)

    result = f.validate('{"a": 1, "b": null, "c": null}')
    assert result.ok
    assert result.input == {"a": 1, "c": None}  # b falls back to its default
    assert f.invoke(result.input) == (1, 2, None)
