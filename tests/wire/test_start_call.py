"""The call-start fast paths are the general path: ``start_call`` and ``_ready``.

The Chat decoder hands a call's first fragment (an integer index, string id, name and
arguments) to ``Assembler.start_call``, which opens the call without the general path's
checks when the call is new. The property: after any prefix of assembler operations,
``start_call`` and ``tool_fragment`` with the same values give the same events, then
(after the same further operations) the same events and the same turn or the same error.

A call whose arguments are whole at its first scan is announced by ``_ready``, which
makes the request and the history shape directly when the text is plain ASCII. The
property: whatever the text, the announced call and the turn are those the general path
(``_emit_ready``, which parses with ``parse_arguments``) makes from the same text handed
over by ``tool_arguments_done``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.errors import ToolwireError
from toolwire.wire import OpenAIChatStream, ToolCallReady
from toolwire.wire.assembler import Assembler

# Fragments that reach every branch: empty, space, halves of an object, whole objects
# (balanced or not by count), a surrogate escape, non-ASCII text, not an object.
PIECES = [
    "",
    " ",
    "{",
    "}",
    " }",
    '{"x": 1}',
    '{"x": 1} ',
    "{}",
    '{"a": "}"}',
    '{"a": {"b": 2}}',
    '{"s": "\\ud800"}',
    '{"s": "é"}',
    '"é\ud800',
    '{"n": 1e999}',
    "[1]",
    '"a"}',
]
indexes = st.sampled_from([None, -1, 0, 1, 2])
ids = st.sampled_from([None, "", "a", "b"])
names = st.sampled_from([None, "", "f", "g"])
texts = st.sampled_from(PIECES)

ops = st.one_of(
    st.tuples(st.just("fragment"), indexes, ids, names, st.none() | texts),
    st.tuples(st.just("arguments"), indexes, texts),
    st.tuples(st.just("done"), st.sampled_from([0, 1, 2]), st.none() | texts),
    st.tuples(st.just("custom"), st.sampled_from([0, 1, 2]), ids, names, st.none() | texts),
    st.tuples(st.just("caller"), st.sampled_from([0, 1, 2])),
    st.tuples(st.just("text"), st.sampled_from(["hi", "é"])),
)
starts = st.tuples(
    st.sampled_from([-1, 0, 1, 2, 3]),
    st.sampled_from(["", "a", "b", "c"]),
    st.sampled_from(["", "f", "g"]),
    texts,
)


def apply_operation(asm: Assembler, op: tuple[Any, ...]) -> None:
    """Apply one drawn assembler operation (test_whole_calls.py uses it too)."""
    kind, *args = op
    if kind == "fragment":
        asm.tool_fragment(*args)
    elif kind == "arguments":
        asm.arguments(*args)
    elif kind == "done":
        asm.tool_arguments_done(*args)
    elif kind == "custom":
        asm.custom_call(*args)
    elif kind == "caller":
        asm.tool_caller(args[0], {"type": "direct"})
    else:
        asm.text(args[0])


def _trace(asm: Assembler, step: Any) -> list[Any]:
    """What ``step(asm)`` did: its events (as text) or the error it raised."""
    try:
        step(asm)
    except ToolwireError as exc:
        return [type(exc).__name__, str(exc), repr(asm.take_events())]
    return [repr(asm.take_events())]


def _run(deltas: bool, before: list[Any], start: Any, after: list[Any]) -> list[Any]:
    asm = Assembler(deltas=deltas)
    out = [_trace(asm, lambda a, op=op: apply_operation(a, op)) for op in before]
    out.append(_trace(asm, start))
    out += [_trace(asm, lambda a, op=op: apply_operation(a, op)) for op in after]
    try:
        turn = asm.close()
    except ToolwireError as exc:
        return [*out, type(exc).__name__, str(exc)]
    requests = [(r.id, r.name, r.raw_arguments, r.input, r.error, r.index) for r in turn.requests]
    return [*out, repr(turn), requests, [(n.kind, n.index) for n in turn.notices]]


@given(
    st.booleans(),
    st.lists(ops, max_size=6),
    starts,
    st.lists(ops, max_size=4),
)
def test_start_call_is_tool_fragment(
    deltas: bool,
    before: list[Any],
    start: tuple[int, str, str, str],
    after: list[Any],
) -> None:
    fast = _run(deltas, before, lambda a: a.start_call(*start), after)
    general = _run(deltas, before, lambda a: a.tool_fragment(*start), after)
    assert fast == general


@pytest.mark.parametrize("index", [-1, -2])
@pytest.mark.parametrize("deltas", [False, True])
def test_a_whole_call_at_a_negative_index_takes_the_general_path(deltas: bool, index: int) -> None:
    # After a call opened by the general path, the straight path's mark says "not every
    # call whole" with -1: a whole call at a negative index must not read it as its own
    # place (the general path gives it the next free index), nor any other negative one.
    before = [("fragment", 0, "a", "f", '{"x": 1}')]
    start = (index, "b", "g", '{"x": 1}')
    fast = _run(deltas, before, lambda a: a.start_call(*start), [])
    general = _run(deltas, before, lambda a: a.tool_fragment(*start), [])
    assert fast == general
    # Without deltas the whole call is announced by its Ready alone, at the index given.
    first = (
        "ToolCallStarted(index=1, id='b'"
        if deltas
        else "[ToolCallReady(index=1, call=ToolCall(id='b'"
    )
    assert first in fast[1][0]


@pytest.mark.parametrize("deltas", [False, True])
def test_a_whole_call_in_its_first_chunk_is_ready_at_once(deltas: bool) -> None:
    stream = OpenAIChatStream(deltas=deltas)
    head = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"i": 1}'}}
    events = stream.feed({"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]})
    # Without deltas, the Ready alone: it says all the Started would (test_no_deltas.py).
    names = ["ToolCallStarted", "ToolCallDelta", "ToolCallReady"] if deltas else ["ToolCallReady"]
    assert [type(e).__name__ for e in events] == names
    ready = events[-1]
    assert ready.request.input == {"i": 1}  # type: ignore[attr-defined]
    stream.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    turn = stream.close()
    assert turn.requests == [ready.request]  # type: ignore[attr-defined]
    assert turn.tool_calls == [ready.call]  # type: ignore[attr-defined]


# Texts a call's arguments may be: objects of strings (lone surrogates raw or as escapes,
# non-ASCII, quotes, backslashes) and numbers (infinity and NaN among them), dumped with
# or without ASCII escapes, and the pieces above.
_values = st.dictionaries(
    st.text(alphabet=["a", "é", "\ud800", "\udc00", "😀", '"', "\\", "}"], max_size=3),
    st.text(alphabet=["a", "é", "\ud800", "😀", "{", "}"], max_size=4)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(),
    max_size=3,
)
arguments = st.sampled_from(PIECES) | st.builds(
    lambda value, ascii, space: json.dumps(value, ensure_ascii=ascii) + space,
    _values,
    st.booleans(),
    st.sampled_from(["", " "]),
)


def _ready_events(asm: Assembler) -> list[Any]:
    return [(e.call, e.request) for e in asm.take_events() if isinstance(e, ToolCallReady)]


@given(arguments)
def test_a_call_ready_at_its_first_scan_is_the_general_paths_call(text: str) -> None:
    whole = Assembler(deltas=False)
    whole.tool_fragment(0, "c1", "f", text)  # the first scan: _ready when it closes
    general = Assembler(deltas=False)
    general.tool_fragment(0, "c1", "f", None)
    general.tool_arguments_done(0, text)  # _emit_ready, parse_arguments
    announced = _ready_events(whole)
    if announced:  # (a text not whole at its first scan never reaches _ready)
        assert announced == _ready_events(general)
        assert repr(whole.close()) == repr(general.close())
