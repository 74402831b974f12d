"""``Turn``, ``ToolRequest`` and ``Notice`` behave as the slotted dataclasses they are.

turn.py is compiled with the wire layer (hatch_build.py), where the three are native
classes with written-out constructors: this file runs against both builds (it imports
toolwire.turn, so the compiled stage runs it too, tests/subsets.py) and holds them to
what a dataclass gives — keyword and positional construction, fresh defaults, equality,
repr, ``fields``/``replace``, copies, pickling (Ray ships turns between processes) and
subclasses of one's own.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from toolwire.messages import AssistantMessage, TextPart, ToolCall, Usage
from toolwire.turn import Notice, ToolRequest, Turn


def _request(**changes: object) -> ToolRequest:
    base = ToolRequest("call_1", "search", '{"q": "x"}', {"q": "x"}, None, 2)
    return dataclasses.replace(base, **changes)


def _turn() -> Turn:
    call = ToolCall("call_1", "search", '{"q": "x"}')
    return Turn(
        AssistantMessage([TextPart("hi"), call]),
        [_request()],
        "tool_calls",
        Usage(10, 2),
        [Notice("empty_call", "a message", 1)],
    )


def test_construction_by_keyword_and_position_and_defaults() -> None:
    request = ToolRequest(id="a", name="f", raw_arguments="{}", input={})
    assert (request.error, request.index, request.repaired, request.freeform) == (
        None,
        0,
        False,
        False,
    )
    assert ToolRequest("a", "f", "{}", {}) == request
    notice = Notice(kind="retry", message="again")
    assert notice.index is None
    assert notice == Notice("retry", "again", None)
    one, two = Turn(AssistantMessage(), []), Turn(message=AssistantMessage(), requests=[])
    assert one == two
    assert one.usage == Usage() and one.notices == []
    # Fresh defaults, as default_factory gives: nothing shared between turns.
    assert one.usage is not two.usage and one.notices is not two.notices
    assert (one.finish_reason, one.refused, one.logprobs, one.continuations, one.model) == (
        None,
        False,
        None,
        0,
        None,
    )


def test_equality_repr_and_properties() -> None:
    turn = _turn()
    assert turn == _turn()
    assert turn != dataclasses.replace(turn, finish_reason="stop")
    assert repr(_request()) == (
        "ToolRequest(id='call_1', name='search', raw_arguments='{\"q\": \"x\"}', "
        "input={'q': 'x'}, error=None, index=2, repaired=False, freeform=False)"
    )
    assert repr(Notice("retry", "m")) == "Notice(kind='retry', message='m', index=None)"
    assert turn.text == "hi" and [c.id for c in turn.tool_calls] == ["call_1"]
    with pytest.raises(TypeError):
        hash(_request())  # a dataclass with eq and without frozen is unhashable


def test_fields_replace_and_match() -> None:
    assert [f.name for f in dataclasses.fields(ToolRequest)] == [
        "id",
        "name",
        "raw_arguments",
        "input",
        "error",
        "index",
        "repaired",
        "freeform",
    ]
    assert [f.name for f in dataclasses.fields(Turn)][:5] == [
        "message",
        "requests",
        "finish_reason",
        "usage",
        "notices",
    ]
    changed = dataclasses.replace(_request(), input=None, error="bad", repaired=True)
    assert (changed.input, changed.error, changed.repaired, changed.id) == (
        None,
        "bad",
        True,
        "call_1",
    )
    match Notice("retry", "again", 3):
        case Notice(kind, message, index):
            assert (kind, message, index) == ("retry", "again", 3)
        case _:
            pytest.fail("no match")


def test_copies_and_pickling() -> None:
    turn = _turn()
    for copied in (copy.deepcopy(turn), pickle.loads(pickle.dumps(turn))):
        assert copied == turn
        assert copied is not turn and copied.requests[0] is not turn.requests[0]
    shallow = copy.copy(turn)
    assert shallow == turn and shallow.requests is turn.requests


def test_slotted() -> None:
    with pytest.raises(AttributeError):
        _request().extra = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        _turn().extra = 1  # type: ignore[attr-defined]


class _LabelledRequest(ToolRequest):
    """A subclass of one's own, as an application might write."""

    def label(self) -> str:
        return f"{self.name}#{self.index}"


def test_subclasses_of_ones_own() -> None:
    request = _LabelledRequest("a", "f", "{}", {}, index=4)
    assert request.label() == "f#4"
    assert isinstance(request, ToolRequest)
    again = pickle.loads(pickle.dumps(request))
    assert type(again) is _LabelledRequest and again.label() == "f#4"
