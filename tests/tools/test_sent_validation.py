"""A sent call's validation on the executor's hot path, against the general one.

``Tool._check_sent`` validates a typed, non-strict tool's arguments with
``kwargs_validator`` (pydantic-core's typed-dict validator over the arguments model's
own field validators, whose output is the keyword arguments) and makes the verdict
with ``valid`` (a ``Validation`` built without the frozen dataclass's ``__init__``).
These tests hold both to what they replace: the model's validation turned into
keyword arguments by ``SignatureModel.kwargs``, and ``Validation(True, tool, input)``.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import pickle
from typing import Annotated, Any, Literal

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import ToolRequest
from toolwire.tools import Tool, ToolContext, Toolset, tool
from toolwire.tools.schema import kwargs_validator
from toolwire.tools.validate import Validation, _ValidationSlots, valid

# --- valid ----------------------------------------------------------------------------


def test_valid_is_the_constructors_validation() -> None:
    made, built = valid("t", {"i": 1}), Validation(True, "t", {"i": 1})
    assert type(made) is Validation
    assert made == built
    assert repr(made) == repr(built)
    assert hash(valid("t", ("x",))) == hash(Validation(True, "t", ("x",)))
    assert [getattr(made, f.name) for f in dataclasses.fields(Validation)] == [
        getattr(built, f.name) for f in dataclasses.fields(Validation)
    ]
    assert made and bool(made) is True


def test_valid_is_frozen_and_copies_like_the_constructors() -> None:
    made = valid("t", {"i": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.ok = False  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(made)) == made
    assert copy.copy(made) == made and copy.deepcopy(made) == made
    assert dataclasses.replace(made, ok=False) == Validation(False, "t", {"i": 1})
    assert dataclasses.asdict(made) == dataclasses.asdict(Validation(True, "t", {"i": 1}))


def test_the_slots_are_validations() -> None:
    """The layout ``__class__`` assignment needs, and every field filled by ``valid``."""
    assert _ValidationSlots.__slots__ == Validation.__slots__
    assert [f.name for f in dataclasses.fields(Validation)] == list(Validation.__slots__)
    assert set(_ValidationSlots.__annotations__) == set(Validation.__slots__)


# --- kwargs_validator ----------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(pydantic.BaseModel):
    x: int
    y: int = 0


@dataclasses.dataclass
class Box:
    width: float
    label: str = "box"


def f_scalars(i: int, s: str, x: float, b: bool) -> str:
    return ""


def f_defaults(i: int = 3, s: str | None = None, xs: list[int] = [], flag: bool = False) -> str:
    return ""


def f_nested(p: Point, boxes: list[Box], where: Point | None = None) -> str:
    return ""


def f_points(a: Point, b: Point, pairs: dict[str, tuple[int, str]] | None = None) -> str:
    return ""


def f_constrained(
    n: Annotated[int, pydantic.Field(gt=0, le=100)],
    colour: Colour,
    mode: Literal["fast", "slow"] = "fast",
    when: datetime.date | None = None,
    anything: Any = None,
) -> str:
    return ""


def f_clashing(json: str, schema: int = 1, p0: str = "", model_config: bool = False) -> str:
    """Parameters named like BaseModel's attributes and like the internal fields."""
    return ""


def f_context(q: str, ctx: ToolContext, limit: int = 5) -> str:
    return ""


TOOLS = [
    tool(fn)
    for fn in (f_scalars, f_defaults, f_nested, f_points, f_constrained, f_clashing, f_context)
]
NAMES = sorted({name for t in TOOLS for name in t.parameters["properties"]} | {"extra", "ctx"})
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.floats(allow_nan=False)
    | st.sampled_from(["", "x", "3", "2.5", "red", "blue", "fast", "slow", "2024-01-02",
                       "true", "no"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["x", "y", "width", "label", "z"]), inner, max_size=3),
    max_leaves=6,
)  # fmt: skip


def _model_way(t: Tool, value: dict[str, Any]) -> tuple[str, Any]:
    """What the model path gives: the keyword arguments, or pydantic's errors."""
    signature = t._signature
    assert signature is not None
    try:
        instance = signature.model.__pydantic_validator__.validate_python(value)
    except pydantic.ValidationError as exc:
        return "invalid", exc.errors(include_url=False)
    return "valid", signature.kwargs(instance)


def test_every_tool_here_gets_one() -> None:
    assert all(t._validate_kwargs is not None for t in [*TOOLS, tool(f_nothing)])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TOOLS), st.dictionaries(st.sampled_from(NAMES), JSON, max_size=5))
def test_it_passes_what_the_model_passes_and_gives_its_kwargs(
    t: Tool, value: dict[str, Any]
) -> None:
    """The same verdict as the model, and when valid the same keyword arguments: the
    same values of the same types, in the same order."""
    validate = t._validate_kwargs
    assert validate is not None
    try:
        mine: tuple[str, Any] = ("valid", validate(value))
    except pydantic.ValidationError:
        mine = ("invalid", None)
    way, theirs = _model_way(t, value)
    assert mine[0] == way
    if way == "valid":
        assert list(mine[1].items()) == list(theirs.items())
        assert [type(v) for v in mine[1].values()] == [type(v) for v in theirs.values()]


def _sent(t: Tool, value: dict[str, Any]) -> Validation:
    """``Toolset.check``'s verdict on a call of ``t`` sent whole with ``value``."""
    found, verdict = Toolset([t]).check(ToolRequest("c1", t.name, "{}", value))
    assert found is t
    return verdict


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(TOOLS), st.dictionaries(st.sampled_from(NAMES), JSON))
def test_a_sent_calls_verdict_is_the_general_paths(t: Tool, value: dict[str, Any]) -> None:
    """``Toolset.check`` (the hot path), ``_check_sent`` (the model's) and ``_check``
    (the general one) agree whole, an empty call's ``empty_call`` included."""
    general = t._check(value, repaired=False, original="{}")
    assert _sent(t, value) == general
    if value:
        assert t._check_sent(value, "{}") == general
    found, admitted, verdict = Toolset([t]).admit(ToolRequest("c1", t.name, "{}", value))
    assert found is t
    if verdict is None:  # admitted without one: check's would be valid(name, input)
        assert general.ok and not general.repaired and admitted == general.input
    else:
        assert verdict == general and admitted is verdict.input


def f_nothing() -> str:
    return ""


def test_an_empty_call() -> None:
    """Of a tool with no parameters or none required: valid, with no arguments; of a
    tool with a required one: ``empty_call``, as the general path says."""
    assert _sent(tool(f_nothing), {}) == Validation(True, "f_nothing", {})
    assert _sent(tool(f_defaults), {}) == Validation(True, "f_defaults", {})
    refused = _sent(tool(f_scalars), {})
    assert refused.kind == "empty_call"
    assert refused == tool(f_scalars)._check({}, repaired=False, original="{}")


def test_a_valid_calls_input_is_the_models() -> None:
    t = tool(f_constrained)
    verdict = _sent(t, {"n": "7", "colour": "red", "when": "2024-01-02"})
    assert verdict == Validation(
        True, "f_constrained", {"n": 7, "colour": Colour.RED, "when": datetime.date(2024, 1, 2)}
    )


def test_an_invalid_calls_message_is_the_models() -> None:
    t = tool(f_scalars)
    verdict = _sent(t, {"i": "x", "s": 1, "extra": 2})
    assert not verdict.ok and verdict.kind == "missing_required"
    assert verdict == t._check({"i": "x", "s": 1, "extra": 2}, repaired=False, original="{}")
    assert {p.path for p in verdict.problems} == {"i", "s", "x", "b", "extra"}


def _info_validated(value: int, info: pydantic.ValidationInfo) -> int:
    return value


def f_info(n: Annotated[int, pydantic.AfterValidator(_info_validated)]) -> str:
    return ""


def f_factory(xs: Annotated[list[int], pydantic.Field(default_factory=list)]) -> str:
    return ""


def f_plain_validator(n: Annotated[int, pydantic.AfterValidator(abs)]) -> str:
    return ""


def f_text(text: str) -> str:
    return text


def test_the_shapes_it_leaves_to_the_model() -> None:
    """A validator that reads ``ValidationInfo`` (its field names are the model's), a
    default factory, a strict tool (its nulls dropped first) and a free-form tool (its
    input is text) keep the model."""
    assert tool(f_info)._validate_kwargs is None
    assert tool(freeform=True)(f_text)._validate_kwargs is None
    assert tool(f_factory)._validate_kwargs is None
    assert tool(strict=True)(f_scalars)._validate_kwargs is None
    plain = tool(f_plain_validator)
    assert plain._validate_kwargs is not None
    assert _sent(plain, {"n": -4}) == Validation(True, "f_plain_validator", {"n": 4})


def test_a_model_of_another_shape_keeps_the_model() -> None:
    signature = tool(f_scalars)._signature
    assert signature is not None
    other = dataclasses.replace(signature, params=signature.params[:1])
    assert kwargs_validator(other) is None
