from __future__ import annotations

from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import ProtocolError, ProviderAPIError, TurnError
from toolwire.messages import ReasoningPart, TextPart, ToolCall, Usage
from toolwire.wire import (
    AnthropicStream,
    Assembler,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)

from .conftest import fixture_bytes, fixture_items


def test_recorded_stream() -> None:
    stream = AnthropicStream()
    events = [e for item in fixture_items("anthropic_parallel.sse") for e in stream.feed(item)]
    turn = stream.close()
    raw = AnthropicStream()
    raw.feed_bytes(fixture_bytes("anthropic_parallel.sse"))
    assert raw.close() == turn
    assert turn.message.parts == [
        ReasoningPart("The user wants both keywords searched.", signature="EqQBCgIYAhIMv1"),
        TextPart("Searching for both."),
        ToolCall("toolu_01A", "explore_code", '{"query": "login"}'),
        ToolCall("toolu_01B", "explore_code", '{"query": "session", "limit": 20}'),
        ToolCall("toolu_01C", "list_files", "{}"),
    ]
    assert [r.input for r in turn.requests] == [
        {"query": "login"},
        {"query": "session", "limit": 20},
        {},
    ]
    assert [r.index for r in turn.requests] == [2, 3, 4]
    assert turn.finish_reason == "tool_calls"
    # input_tokens includes cached input (OpenAI's convention, the same for every provider).
    assert turn.usage == Usage(input_tokens=472 + 256, output_tokens=89, cache_read_tokens=256)
    # A tool without input is ready at its content_block_stop.
    assert [e.call.id for e in events if isinstance(e, ToolCallReady)] == [
        "toolu_01A",
        "toolu_01B",
        "toolu_01C",
    ]


def test_redacted_thinking_and_stop_reasons() -> None:
    stream = AnthropicStream()
    stream.feed(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "redacted_thinking", "data": "EmwK"},
        }
    )
    stream.feed({"type": "content_block_stop", "index": 0})
    stream.feed(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens"},
            "usage": {"output_tokens": 3},
        }
    )
    stream.feed({"type": "message_stop"})
    turn = stream.close()
    assert turn.message.parts == [ReasoningPart("", redacted="EmwK")]
    assert turn.finish_reason == "length"


def test_error_event_and_malformed_events() -> None:
    with pytest.raises(ProviderAPIError, match="Overloaded") as info:
        AnthropicStream().feed(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        )
    assert info.value.error_type == "overloaded_error"
    with pytest.raises(ProtocolError, match=r"field .delta. is missing"):
        AnthropicStream().feed({"type": "content_block_delta", "index": 0})
    with pytest.raises(ProtocolError, match="never started"):
        Assembler().tool_arguments_done(3)


def test_missing_message_stop_is_truncation() -> None:
    stream = AnthropicStream()
    stream.feed(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "hi"}}
    )
    with pytest.raises(ProtocolError, match="ended before"):
        stream.close()


def test_sdk_event_objects_are_accepted() -> None:
    types = pytest.importorskip("anthropic.types")
    from pydantic import TypeAdapter

    adapter = TypeAdapter(types.RawMessageStreamEvent)
    items = [i for i in fixture_items("anthropic_parallel.sse") if i["type"] != "ping"]
    from_sdk = AnthropicStream()
    for item in items:
        from_sdk.feed(adapter.validate_python(item))
    from_dicts = AnthropicStream()
    for item in items:
        from_dicts.feed(item)
    assert from_sdk.close() == from_dicts.close()


def test_streamed_and_non_streamed_usage_agree() -> None:
    from toolwire.wire import decode_anthropic_response

    usage = {"input_tokens": 10, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 2}
    stream = AnthropicStream()
    stream.feed({"type": "message_start", "message": {"usage": {**usage, "output_tokens": 1}}})
    stream.feed(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9},
        }
    )
    stream.feed({"type": "message_stop"})
    response = {"content": [], "stop_reason": "end_turn", "usage": {**usage, "output_tokens": 9}}
    assert stream.close().usage == decode_anthropic_response(response).usage == Usage(17, 9, 5, 2)


def _open_tool_block(stream: AnthropicStream, index: int) -> None:
    block = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": {}}
    stream.feed({"type": "content_block_start", "index": index, "content_block": block})


def _fragment(index: object, delta: object) -> dict[str, object]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


@pytest.mark.parametrize(
    ("item", "message"),
    [
        # Each is read by the flat path's subscripts first, then again with every check.
        (_fragment(1, {"type": "input_json_delta"}), r"field .partial_json. is missing"),
        (_fragment(True, {"type": "input_json_delta", "partial_json": "{"}), "integer"),
        (_fragment(1.0, {"type": "input_json_delta", "partial_json": "{"}), "integer"),
        (_fragment(1, {"type": "input_json_delta", "partial_json": 7}), "must be a string"),
        (_fragment(1, ["input_json_delta"]), "delta must be an object"),
        # A TypeError on the flat path (a string, a number, null cannot be subscripted).
        (_fragment(1, "input_json_delta"), "delta must be an object, got str"),
        (_fragment(1, 3), "delta must be an object, got int"),
        (_fragment(1, None), "delta must be an object, got null"),
        ({"index": 1, "delta": {"type": "input_json_delta"}}, r"field .type. is missing"),
    ],
)
def test_malformed_fragments_of_an_open_call_are_protocol_errors(
    item: dict[str, object], message: str
) -> None:
    stream = AnthropicStream()
    _open_tool_block(stream, 1)
    with pytest.raises(ProtocolError, match=message):
        stream.feed(item)
    # The call got nothing from the item, and the decoder stays failed.
    assert stream.assembler.calls[1].parts == []
    with pytest.raises(ProtocolError, match=message):
        stream.feed(_fragment(1, {"type": "input_json_delta", "partial_json": "{}"}))


def test_fragment_paths_give_the_same_events() -> None:
    """The flat path (a call already open) and the assembler's own (a fragment that
    opens a call, an empty fragment) produce the same events and turn. The call is
    ready at its block's stop, not when its text closes: Anthropic says when it ends."""
    stream = AnthropicStream()
    _open_tool_block(stream, 0)
    events = stream.feed(_fragment(0, {"type": "input_json_delta", "partial_json": '{"a": '}))
    events += stream.feed(_fragment(0, {"type": "input_json_delta", "partial_json": ""}))
    events += stream.feed(_fragment(0, {"type": "input_json_delta", "partial_json": "1}"}))
    assert [type(e).__name__ for e in events] == ["ToolCallDelta", "ToolCallDelta"]
    events += stream.feed({"type": "content_block_stop", "index": 0})
    assembler = Assembler()
    assembler.tool_fragment(0, "toolu_0", "f", None)
    assembler.take_events()
    for text in ('{"a": ', "", "1}"):
        assembler.tool_fragment(0, None, None, text)
    assembler.tool_arguments_done(0)
    assert events == assembler.take_events()
    assert [type(e).__name__ for e in events] == ["ToolCallDelta", "ToolCallDelta", "ToolCallReady"]
    # A fragment of a block that is not open starts a call without id or name.
    assert stream.feed(_fragment(5, {"type": "input_json_delta", "partial_json": "{"})) == [
        ToolCallStarted(5, None, None),
        ToolCallDelta(5, "{"),
    ]
    stream.feed({"type": "message_stop"})
    with pytest.raises(TurnError, match="did not include an id"):
        stream.close()


def test_events_an_assembler_method_left_come_before_the_fragment() -> None:
    stream = AnthropicStream()
    _open_tool_block(stream, 0)
    stream.assembler.notice("custom", "added between feeds")
    events = stream.feed(_fragment(0, {"type": "input_json_delta", "partial_json": "{"}))
    assert [type(e).__name__ for e in events] == ["Notice", "ToolCallDelta"]
    assert stream.feed(_fragment(0, {"type": "input_json_delta", "partial_json": '"'})) == [
        ToolCallDelta(0, '"')
    ]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"input_tokens": 3, "output_tokens": 1}, Usage(3, 1)),
        (
            {"input_tokens": 3, "cache_read_input_tokens": 2, "cache_creation_input_tokens": 1},
            Usage(6, 0, 2, 1),
        ),
        # Not all integers: the general reading (a null or a bool counts as 0).
        (
            {"input_tokens": None, "output_tokens": True, "cache_read_input_tokens": 2},
            Usage(2, 0, 2),
        ),
        (
            {"output_tokens": 4, "output_tokens_details": {"thinking_tokens": 3}},
            Usage(0, 4, 0, 0, 3),
        ),
    ],
)
def test_anthropic_usage_fast_and_general_readings(
    usage: dict[str, object], expected: Usage
) -> None:
    from toolwire.wire.usage import anthropic_usage

    assert anthropic_usage(usage) == expected


_COUNT_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
# A report's values as providers (and broken proxies) send them: counts, nulls (left
# out of the merge), and values that read as 0.
_VALUES = st.one_of(
    st.none(), st.integers(0, 10**6), st.booleans(), st.floats(allow_nan=False), st.text(max_size=2)
)
_DETAILS = st.one_of(
    st.none(), st.integers(0, 9), st.fixed_dictionaries({"thinking_tokens": _VALUES})
)
_REPORTS = st.dictionaries(
    st.sampled_from([*_COUNT_KEYS, "service_tier"]), _VALUES, max_size=5
) | st.builds(
    lambda report, details: {**report, "output_tokens_details": details},
    st.dictionaries(st.sampled_from(_COUNT_KEYS), _VALUES, max_size=4),
    _DETAILS,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_REPORTS, min_size=1, max_size=4))
def test_streamed_usage_is_the_merge_of_its_reports(reports: list[dict[str, object]]) -> None:
    """Each report's usage, and the turn's, is the reading of every report so far merged
    into one object (a null keeps the earlier value): the decoder keeps only the counts."""
    from toolwire.wire.usage import anthropic_usage

    stream = AnthropicStream()
    events = stream.feed({"type": "message_start", "message": {"usage": reports[0]}})
    for report in reports[1:]:
        events += stream.feed({"type": "message_delta", "delta": {}, "usage": report})
    stream.feed({"type": "message_stop"})
    merged: dict[str, object] = {}
    expected = []
    for report in reports:
        merged.update({key: value for key, value in report.items() if value is not None})
        if report:  # an empty report reports nothing
            expected.append(anthropic_usage(merged))
    assert [e.usage for e in events if isinstance(e, UsageReported)] == expected
    assert stream.close().usage == (expected[-1] if expected else Usage())


class _Kind(str):
    """A str subclass, as caller data may hold."""


def test_kinds_that_are_not_plain_strings() -> None:
    """An event or block type that is a str subclass is read as its text; a type that is
    no string, or null, is an event to ignore (in both builds: the compiled one compares
    kinds as typed strings)."""
    stream = AnthropicStream()
    stream.feed({"type": _Kind("message_start"), "message": {"usage": {"input_tokens": 3}}})
    stream.feed({"type": 5})
    stream.feed({"type": None})
    block = {"type": _Kind("tool_use"), "id": "toolu_1", "name": "f", "input": {}}
    stream.feed({"type": _Kind("content_block_start"), "index": 0, "content_block": block})
    for piece in ("", '{"a": ', "1}"):
        delta = {"type": _Kind("input_json_delta"), "partial_json": piece}
        stream.feed({"type": _Kind("content_block_delta"), "index": 0, "delta": delta})
    stream.feed({"type": _Kind("content_block_stop"), "index": 0})
    stream.feed(
        {
            "type": _Kind("message_delta"),
            "delta": {"stop_reason": _Kind("tool_use")},
            "usage": {"output_tokens": 2},
        }
    )
    stream.feed({"type": _Kind("message_stop")})
    turn = stream.close()
    assert [(r.id, r.name, r.input) for r in turn.requests] == [("toolu_1", "f", {"a": 1})]
    assert turn.usage == Usage(3, 2)
    assert turn.finish_reason == "tool_calls"


def test_a_delta_that_is_a_mapping_but_not_a_dict() -> None:
    """Caller data may hold any mapping where JSON has an object: read as a dict (the
    compiled build once let its run-time type check's TypeError escape)."""
    stream = AnthropicStream()
    _open_tool_block(stream, 0)
    delta = MappingProxyType({"type": "input_json_delta", "partial_json": '{"a": 1}'})
    stream.feed({"type": "content_block_delta", "index": 0, "delta": delta})
    text = MappingProxyType({"type": "text_delta", "text": "hi"})
    stream.feed({"type": "content_block_delta", "index": 1, "delta": text})
    stream.feed({"type": "content_block_stop", "index": 0})
    stream.feed({"type": "message_delta", "delta": MappingProxyType({"stop_reason": "tool_use"})})
    stream.feed({"type": "message_stop"})
    turn = stream.close()
    assert [r.input for r in turn.requests] == [{"a": 1}]
    assert turn.message.text == "hi"
    assert turn.finish_reason == "tool_calls"
