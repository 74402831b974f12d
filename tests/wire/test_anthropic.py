from __future__ import annotations

import pytest

from toolwire.errors import ProtocolError, ProviderAPIError, TurnError
from toolwire.messages import ReasoningPart, TextPart, ToolCall, Usage
from toolwire.wire import (
    AnthropicStream,
    Assembler,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
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
