"""A call's history shape (``ToolCall``) is made by the assembler without its constructor.

The assembler makes each ``ToolCall`` as a new object with its six fields stored one by
one (the constructor ``@dataclass`` generates runs interpreted, the largest cost of a
call's shape). These tests hold it to the constructor: on each path that makes one (a
call whole in its first fragment, a call closed by its fragments, a call rebuilt at the
turn's end, a programmatic call's caller, a free-form call), the call announced and the
call in the turn equal ``ToolCall(...)``, field by field, and a field added to
``ToolCall`` that the assembler does not set fails here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from toolwire.messages import ToolCall
from toolwire.turn import Turn
from toolwire.wire import OpenAIChatStream
from toolwire.wire.assembler import Assembler
from toolwire.wire.events import Event, ToolCallReady

FIELDS = ("id", "name", "arguments", "kind", "freeform", "caller")


def _fields(call: ToolCall) -> dict[str, Any]:
    """Every field of ``call`` by name (an unset one raises ``AttributeError``)."""
    return {f.name: getattr(call, f.name) for f in dataclasses.fields(call)}


def _check(made: ToolCall, expected: ToolCall) -> None:
    assert type(made) is ToolCall
    assert _fields(made) == _fields(expected)
    assert made == expected
    assert repr(made) == repr(expected)
    assert dataclasses.asdict(made) == dataclasses.asdict(expected)


def _announced(events: list[Event]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallReady)]


def test_the_fields_are_the_ones_the_assembler_sets() -> None:
    assert tuple(f.name for f in dataclasses.fields(ToolCall)) == FIELDS


def _chat(chunks: list[dict[str, Any]]) -> tuple[list[Event], Turn]:
    decoder = OpenAIChatStream()
    events: list[Event] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events, decoder.close()


def _call_chunk(tool_call: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"tool_calls": [tool_call]}}]}


FINISH = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}


def test_a_call_whole_in_its_first_fragment() -> None:
    head = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"i": 1}'}}
    events, turn = _chat([_call_chunk(head), FINISH])
    expected = ToolCall("c1", "f", '{"i": 1}')
    [announced] = _announced(events)
    _check(announced, expected)
    _check(turn.tool_calls[0], expected)


@pytest.mark.parametrize("last", ['{"i": 1}', '{"s": "é"}', '{"s": "\\ud800"}'])
def test_a_call_closed_by_a_later_fragment(last: str) -> None:
    head = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": ""}}
    rest = {"index": 0, "function": {"arguments": last}}
    events, turn = _chat([_call_chunk(head), _call_chunk(rest), FINISH])
    [announced] = _announced(events)
    text = turn.tool_calls[0].arguments
    _check(announced, ToolCall("c1", "f", text))
    _check(turn.tool_calls[0], ToolCall("c1", "f", text))


def test_a_call_rebuilt_at_the_end_of_the_turn() -> None:
    asm = Assembler()
    asm.tool_fragment(0, "c1", "f", '{"i": 1}')
    asm.arguments(0, " ")  # after the announcement: the turn's call is made again
    asm.finish("tool_calls")
    _check(asm.close().tool_calls[0], ToolCall("c1", "f", '{"i": 1} '))


def test_an_empty_call_is_kept_as_an_empty_object() -> None:
    asm = Assembler()
    asm.tool_fragment(0, "c1", "f", None)
    asm.finish("tool_calls")
    _check(asm.close().tool_calls[0], ToolCall("c1", "f", "{}"))


def test_a_programmatic_call_keeps_its_caller() -> None:
    caller = {"type": "code_execution_20250825", "tool_id": "srv_1"}
    asm = Assembler()
    asm.tool_fragment(0, "c1", "f", None)
    asm.tool_caller(0, caller)
    asm.arguments(0, '{"i": 1}')
    asm.tool_arguments_done(0)
    asm.finish("tool_calls")
    expected = ToolCall("c1", "f", '{"i": 1}', caller=caller)
    [announced] = _announced(asm.take_events())
    _check(announced, expected)
    _check(asm.close().tool_calls[0], expected)


def test_a_free_form_call() -> None:
    asm = Assembler()
    asm.custom_call(0, "c1", "shell", "ls -la")
    asm.tool_arguments_done(0)
    asm.finish("tool_calls")
    expected = ToolCall("c1", "shell", "ls -la", freeform=True)
    [announced] = _announced(asm.take_events())
    _check(announced, expected)
    _check(asm.close().tool_calls[0], expected)


@pytest.mark.parametrize("first", ["start_call", "tool_fragment"])
def test_a_whole_call_replaced_then_closed_by_a_fragment(first: str) -> None:
    # A whole call's state, changed after it was made (final arguments replace its
    # text, a fragment follows), gives the turn the general path's call gives.
    asm = Assembler()
    getattr(asm, first)(0, "c1", "f", '{"i": 1}')
    asm.tool_arguments_done(0, '{"i": ')
    asm.arguments(0, "2}")
    asm.finish("tool_calls")
    turn = asm.close()
    _check(turn.tool_calls[0], ToolCall("c1", "f", '{"i": 2}'))
    assert turn.requests[0].input == {"i": 2}
