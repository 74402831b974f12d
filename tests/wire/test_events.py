"""The event classes behave like the slotted dataclasses they replace (events.py)."""

from __future__ import annotations

import pytest

from toolwire.wire import (
    Finished,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallStarted,
)


def test_construction_equality_and_repr() -> None:
    delta = ToolCallDelta(2, '{"a"')
    assert delta == ToolCallDelta(index=2, arguments='{"a"')
    assert delta != ToolCallDelta(2, "other")
    # Same fields, another event type: not equal (a text delta is not a reasoning delta).
    assert TextDelta("x") != ReasoningDelta("x")
    assert repr(delta) == "ToolCallDelta(index=2, arguments='{\"a\"')"
    assert repr(ToolCallStarted(0, None, "f")) == "ToolCallStarted(index=0, id=None, name='f')"


def test_match_by_position() -> None:
    match ToolCallStarted(1, "call_1", "search"):
        case ToolCallStarted(index, call_id, name):
            assert (index, call_id, name) == (1, "call_1", "search")
        case _:
            pytest.fail("no match")


def test_slotted_and_unhashable() -> None:
    event = Finished("stop")
    with pytest.raises(AttributeError):
        event.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(event)
