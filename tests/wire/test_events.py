"""The event classes behave like the slotted dataclasses they replace (events.py)."""

from __future__ import annotations

import pytest

from toolwire.messages import Usage
from toolwire.wire import (
    AnthropicStream,
    Finished,
    OpenAIChatStream,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallStarted,
    UsageReported,
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


def _anthropic_fragments() -> list[dict[str, object]]:
    return [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a"'},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": ": 1"},
        },
    ]


def test_fragment_events_from_feed_behave_like_constructed_ones() -> None:
    # The flat feeds make ToolCallDelta without its __init__ in the pure build (events.py):
    # what they return must be indistinguishable from a constructed event.
    stream = AnthropicStream()
    got = [stream.feed(item) for item in _anthropic_fragments()]
    first, second = got[1][0], got[2][0]
    assert got[1] == [ToolCallDelta(0, '{"a"')]
    assert type(first) is ToolCallDelta
    assert repr(second) == "ToolCallDelta(index=0, arguments=': 1')"
    match second:
        case ToolCallDelta(index, arguments):
            assert (index, arguments) == (0, ": 1")
        case _:
            pytest.fail("no match")
    with pytest.raises(TypeError):
        hash(first)
    with pytest.raises(AttributeError):
        first.extra = 1  # type: ignore[attr-defined]
    chat = OpenAIChatStream()
    chunk = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "c", "function": {"name": "f", "arguments": ""}}
                    ]
                },
            }
        ]
    }
    chat.feed(chunk)
    more = {
        "choices": [
            {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]}}
        ]
    }
    assert chat.feed(more) == [ToolCallDelta(0, '{"a"')]


def test_each_feed_returns_a_list_of_its_own() -> None:
    # A fragment's events come in a fresh list: a caller may keep what feed returned.
    stream = AnthropicStream()
    kept = [stream.feed(item) for item in _anthropic_fragments()]
    assert kept[1] is not kept[2]
    assert kept[1] == [ToolCallDelta(0, '{"a"')]
    assert kept[2] == [ToolCallDelta(0, ": 1")]
    stream.feed({"type": "content_block_stop", "index": 0})  # emits ToolCallReady
    assert kept[2] == [ToolCallDelta(0, ": 1")]


def test_a_usage_reported_as_counts_is_the_usage_built_from_them() -> None:
    # UsageReported.of_counts builds its Usage at the first read, once; the event is
    # indistinguishable from one made with the Usage itself.
    counted = UsageReported.of_counts((12, 3, 4, 5, 6))
    assert counted == UsageReported(Usage(12, 3, 4, 5, 6))
    assert counted.usage is counted.usage
    assert repr(counted) == repr(UsageReported(Usage(12, 3, 4, 5, 6)))
    match counted:
        case UsageReported(usage):
            assert usage.total_tokens == 15
        case _:
            pytest.fail("no match")
    counted.usage = Usage(1)
    assert counted == UsageReported(Usage(1))


def test_anthropic_usage_reports_and_the_turns_usage() -> None:
    # Each report says the counts as they were then (message_delta sends only what
    # changed); the turn's usage is the last report's.
    stream = AnthropicStream(deltas=False)
    start = {
        "type": "message_start",
        "message": {"usage": {"input_tokens": 7, "cache_read_input_tokens": 5, "output_tokens": 1}},
    }
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn"},
        "usage": {"output_tokens": 9},
    }
    events = stream.feed(start) + stream.feed(end) + stream.feed({"type": "message_stop"})
    reports = [e for e in events if type(e) is UsageReported]
    assert [r.usage for r in reports] == [Usage(12, 1, 5, 0, 0), Usage(12, 9, 5, 0, 0)]
    turn = stream.close()
    assert turn.usage is reports[-1].usage
    assert stream.assembler.usage is turn.usage
