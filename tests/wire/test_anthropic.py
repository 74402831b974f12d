from __future__ import annotations

import pytest

from toolwire.errors import ProtocolError, ProviderAPIError
from toolwire.messages import ReasoningPart, TextPart, ToolCall, Usage
from toolwire.wire import AnthropicStream, Assembler, ToolCallReady

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
    from toolwire.history import decode_anthropic_response

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
