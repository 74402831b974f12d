"""Return values → deterministic result text, or a ResultError."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import json
import pathlib
import uuid
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import ResultError
from toolwire.run.results import render_content


class Color(enum.Enum):
    RED = "red"


class Point(pydantic.BaseModel):
    x: int
    when: dt.date


@dataclasses.dataclass
class Box:
    size: int
    tags: frozenset[str]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain", "plain"),
        ("", ""),
        (None, "null"),
        (True, "true"),
        (3, "3"),
        (0.5, "0.5"),
        ({"b": 1, "a": "é"}, '{"b": 1, "a": "é"}'),
        ([1, (2, 3)], "[1, [2, 3]]"),
        (Point(x=1, when=dt.date(2024, 5, 1)), '{"x": 1, "when": "2024-05-01"}'),
        (Box(2, frozenset({"b", "a"})), '{"size": 2, "tags": ["a", "b"]}'),
        (b"caf\xc3\xa9", "café"),
        (b"\xff\x00", "(binary, 2 bytes, base64) /wA="),
        (bytearray(b"ok"), "ok"),
        (Color.RED, '"red"'),
        ({1, 3, 2}, "[1, 2, 3]"),
        ({"k": {1, "a"}}, '{"k": ["a", 1]}'),
        (dt.datetime(2024, 1, 2, 3, 4, 5), '"2024-01-02T03:04:05"'),
        (uuid.UUID(int=1), '"00000000-0000-0000-0000-000000000001"'),
        (decimal.Decimal("1.10"), '"1.10"'),
        (pathlib.PurePosixPath("/a/b"), '"/a/b"'),
    ],
)
def test_table(value: Any, text: str) -> None:
    assert render_content(value) == text


@pytest.mark.parametrize("value", [object(), {(1, 2): 3}, lambda: 1, {"x": object()}])
def test_unserialisable(value: Any) -> None:
    with pytest.raises(ResultError) as info:
        render_content(value)
    assert info.value.fault == "tool"


def test_circular() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ResultError, match="Circular"):
        render_content(loop)


def test_huge_values_are_whole() -> None:
    # Cutting is the context policy's (toolwire.context.truncate), nowhere else.
    assert render_content("x" * 250_000) == "x" * 250_000
    assert render_content(list(range(50_000))) == str(list(range(50_000)))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=1000, deadline=None)
@given(json_values)
def test_json_values_round_trip_and_are_deterministic(value: Any) -> None:
    text = render_content(value)
    assert text == render_content(value)
    if not isinstance(value, str):
        assert json.loads(text) == value


@settings(max_examples=300, deadline=None)
@given(st.sets(st.integers() | st.text(max_size=3), max_size=8))
def test_sets_render_the_same_whatever_the_insertion_order(members: set[Any]) -> None:
    reordered: set[Any] = set(range(1000, 1100))  # a bigger table: a different internal order
    for member in reversed(list(members)):
        reordered.add(member)
    reordered -= set(range(1000, 1100)) - members
    assert render_content(members) == render_content(reordered)
