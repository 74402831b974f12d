"""Parallel calls all on ``index: 0``, names and arguments re-sent whole (issue 25 a, b).

Fixtures in ``fixtures/servers`` (sources in its README): vLLM's whole calls one per
chunk on index 0, Ollama-style fragments on index 0, Kimi K2's name re-sent with every
chunk, arguments re-sent whole. Each is fed every way (``servers_feed.every_feed``) and
through the non-streaming body decoder where a body exists.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.turn import Turn
from toolwire.wire import decode_openai_chat_response
from toolwire.wire.assembler import Assembler
from toolwire.wire.events import Notice, ToolCallReady, ToolCallStarted

from .servers_feed import body, every_feed, from_dicts, items


def _calls(turn: Turn) -> list[tuple[str, str, str]]:
    return [(c.id, c.name, c.arguments) for c in turn.tool_calls]


def _kinds(turn: Turn) -> list[str]:
    return [n.kind for n in turn.notices]


VLLM = [
    ("call-9439f831-8d70-47f3-b058-d514241d7ef8", "add_numbers", '{"b":2,"a":2}'),
    (
        "call-84eb6907-b8e3-4f15-a15b-eca7410ffaaf",
        "get_weather",
        '{"unit":"celsius","location":"Tokyo"}',
    ),
]


def test_whole_calls_one_per_chunk_on_index_0_are_separate_calls() -> None:
    turn = every_feed("chat-vllm-index0-whole.chunks.txt")
    assert _calls(turn) == VLLM
    assert [r.index for r in turn.requests] == [0, 1]
    assert all(r.error is None for r in turn.requests)
    assert _kinds(turn) == ["call_split"]
    assert turn.notices[0].index == 1
    assert turn.text == "\n"


def test_the_body_of_the_same_turn_agrees_with_the_stream() -> None:
    streamed = every_feed("chat-vllm-index0-whole.chunks.txt")
    decoded = decode_openai_chat_response(body("chat-vllm-index0-whole.json"))
    assert _calls(decoded) == _calls(streamed)
    assert [r.index for r in decoded.requests] == [r.index for r in streamed.requests]
    assert [r.input for r in decoded.requests] == [r.input for r in streamed.requests]


def test_events_give_each_call_its_own_index_and_readiness() -> None:
    events, turn = from_dicts(items("chat-index0-fragments.chunks.txt"))
    started = [(e.index, e.id, e.name) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [(0, "call_a1", "read"), (1, "call_b2", "read")]
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.index, e.request.input) for e in ready] == [
        (0, {"path": "a.rs"}),
        (1, {"path": "b.rs"}),
    ]
    assert [n.kind for n in events if isinstance(n, Notice)] == ["call_split"]
    assert turn.requests[1] is ready[1].request


def test_id_less_fragments_extend_the_call_opened_there_last() -> None:
    turn = every_feed("chat-index0-fragments.chunks.txt")
    assert _calls(turn) == [
        ("call_a1", "read", '{"path": "a.rs"}'),
        ("call_b2", "read", '{"path": "b.rs"}'),
    ]


def test_a_split_call_takes_the_next_free_index_past_other_indices() -> None:
    asm = Assembler()
    asm.tool_fragment(0, "a", "f", '{"x":')
    asm.tool_fragment(1, "b", "g", "{}")
    asm.tool_fragment(0, None, None, " 1}")
    asm.tool_fragment(0, "c", "h", '{"y": 2}')
    asm.tool_fragment(2, "d", "k", "{}")  # the provider's index 2 is taken: next free
    turn = asm.close()
    assert [(r.id, r.index) for r in turn.requests] == [("a", 0), ("b", 1), ("c", 2), ("d", 3)]
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [
        ("a", '{"x": 1}'),
        ("b", "{}"),
        ("c", '{"y": 2}'),
        ("d", "{}"),
    ]


def test_a_new_id_without_a_name_keeps_the_first_and_says_so() -> None:
    asm = Assembler()
    asm.tool_fragment(0, "a", "f", '{"x":')
    asm.tool_fragment(0, "b", None, " 1}")
    turn = asm.close()
    assert _calls(turn) == [("a", "f", '{"x": 1}')]
    assert _kinds(turn) == ["id_changed"]


# -- (b) names and arguments re-sent whole ------------------------------------------------


def test_a_name_re_sent_with_every_chunk_is_kept_once() -> None:
    turn = every_feed("chat-kimi-name-repeated.chunks.txt")
    assert _calls(turn) == [("functions.search_files:99", "search_files", '{"pattern": "login"}')]
    assert _kinds(turn) == ["name_repeated"]


def test_a_name_streamed_in_pieces_still_joins() -> None:
    asm = Assembler()
    asm.tool_fragment(0, "call_1", "get_", None)
    asm.tool_fragment(0, "call_1", "weather", "{}")
    turn = asm.close()
    assert _calls(turn) == [("call_1", "get_weather", "{}")]
    assert turn.notices == []


def test_arguments_re_sent_whole_are_kept_once() -> None:
    turn = every_feed("chat-arguments-cumulative.chunks.txt")
    assert _calls(turn) == [("call_zrh", "get_weather", '{"city":"Zurich","unit":"C"}')]
    assert turn.requests[0].input == {"city": "Zurich", "unit": "C"}
    assert set(_kinds(turn)) == {"name_repeated", "arguments_repeated"}


def test_deltas_that_repeat_the_id_are_still_deltas() -> None:
    asm = Assembler()
    asm.tool_fragment(0, "call_1", "f", None)
    for fragment in ('{"a"', ": ", '{"a"', ": 1}}"):
        asm.tool_fragment(0, "call_1", None, fragment)
    turn = asm.close()
    assert _calls(turn) == [("call_1", "f", '{"a": {"a": 1}}')]
    assert turn.notices == []


# -- the property -----------------------------------------------------------------------

_ARGS = st.dictionaries(st.sampled_from("abc"), st.integers(0, 9), max_size=2)


@st.composite
def _placed_calls(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]]]:
    """Calls with distinct ids on drawn provider indices (often all on 0), as chunks:
    calls sharing an index one after the other, indices interleaved any way."""
    n = draw(st.integers(1, 5))
    slots = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    calls = []
    for i in range(n):
        text = json.dumps(draw(_ARGS))
        cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=3)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        calls.append((f"call_{i}", f"tool{i}", text, slots[i], pieces))
    # One queue of fragments per provider index; calls on an index one after the other.
    queues: dict[int, list[dict[str, Any]]] = {}
    for cid, name, _text, slot, pieces in calls:
        first = {"index": slot, "id": cid, "type": "function", "function": {"name": name}}
        first["function"]["arguments"] = pieces[0]
        queues.setdefault(slot, []).append(first)
        for piece in pieces[1:]:
            queues[slot].append({"index": slot, "function": {"arguments": piece}})
    order = draw(st.permutations([s for s, q in queues.items() for _ in q]))
    chunks = []
    for slot in order:
        tc = queues[slot].pop(0)
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]})
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return chunks, [(cid, name, text) for cid, name, text, _s, _p in calls]


@settings(max_examples=150, deadline=None)
@given(_placed_calls())
def test_calls_with_distinct_ids_on_any_indices_assemble_the_same(
    case: tuple[list[dict[str, Any]], list[tuple[Any, ...]]],
) -> None:
    chunks, expected = case
    events, turn = from_dicts(chunks)
    assert sorted(_calls(turn)) == sorted(expected)
    indexes = [r.index for r in turn.requests]
    assert len(set(indexes)) == len(expected) and indexes == sorted(indexes)
    assert all(r.error is None for r in turn.requests)
    ready = {e.request.id for e in events if isinstance(e, ToolCallReady)}
    assert ready == {cid for cid, _n, _t in expected}
