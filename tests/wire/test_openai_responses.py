from __future__ import annotations

import pytest

from toolwire.errors import ProviderAPIError
from toolwire.messages import ReasoningPart, TextPart, ToolCall, Usage
from toolwire.wire import OpenAIResponsesStream

from .conftest import fixture_bytes, fixture_items


def test_recorded_stream() -> None:
    stream = OpenAIResponsesStream()
    for item in fixture_items("openai_responses_parallel.sse"):
        stream.feed(item)
    turn = stream.close()
    raw = OpenAIResponsesStream()
    raw.feed_bytes(fixture_bytes("openai_responses_parallel.sse"))
    assert raw.close() == turn
    assert turn.message.parts == [
        ReasoningPart("Search both in parallel.", redacted="gAAAAABo-enc", id="rs_1"),
        TextPart("Searching now."),
        ToolCall("call_a", "explore_code", '{"query":"login"}'),
        ToolCall("call_b", "explore_code", '{"query":"session"}'),
    ]
    assert turn.finish_reason == "tool_calls"
    assert turn.usage == Usage(
        input_tokens=120, output_tokens=40, cache_read_tokens=64, reasoning_tokens=12
    )
    assert not turn.notices


def added(index: int, call_id: str = "c1", name: str = "f") -> dict:
    item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": ""}
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def completed() -> dict:
    return {"type": "response.completed", "response": {"status": "completed"}}


def test_arguments_only_in_done_event() -> None:
    stream = OpenAIResponsesStream()
    stream.feed(added(0))
    stream.feed(
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "arguments": '{"a": 1}',
        }
    )
    stream.feed(completed())
    turn = stream.close()
    assert turn.requests[0].input == {"a": 1}
    assert not turn.notices


def test_done_text_wins_over_different_fragments_with_a_notice() -> None:
    stream = OpenAIResponsesStream()
    stream.feed(added(0))
    stream.feed(
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"a": 2}'}
    )
    stream.feed(
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "arguments": '{"a": 1}',
        }
    )
    stream.feed(completed())
    turn = stream.close()
    assert turn.tool_calls[0].arguments == '{"a": 1}'
    assert turn.requests[0].input == {"a": 1}
    assert [n.kind for n in turn.notices] == ["arguments_mismatch"]


def test_incomplete_failed_and_error() -> None:
    stream = OpenAIResponsesStream()
    stream.feed({"type": "response.output_text.delta", "output_index": 0, "delta": "cut"})
    stream.feed(
        {
            "type": "response.incomplete",
            "response": {"incomplete_details": {"reason": "max_output_tokens"}},
        }
    )
    assert stream.close().finish_reason == "length"
    with pytest.raises(ProviderAPIError, match="boom"):
        OpenAIResponsesStream().feed(
            {
                "type": "response.failed",
                "response": {"error": {"code": "server_error", "message": "boom"}},
            }
        )
    with pytest.raises(ProviderAPIError, match="rate"):
        OpenAIResponsesStream().feed(
            {"type": "error", "code": "rate_limit_exceeded", "message": "rate limited"}
        )


def test_unknown_event_types_are_ignored() -> None:
    stream = OpenAIResponsesStream()
    stream.feed({"type": "response.web_search_call.in_progress", "output_index": 0})
    stream.feed(completed())
    assert stream.close().finish_reason == "stop"


def test_sdk_event_objects_are_accepted() -> None:
    responses = pytest.importorskip("openai.types.responses")
    from openai._models import construct_type  # how the SDK builds events from the wire

    items = fixture_items("openai_responses_parallel.sse")
    from_sdk = OpenAIResponsesStream()
    for item in items:
        event = construct_type(type_=responses.ResponseStreamEvent, value=item)
        assert not isinstance(event, dict)
        from_sdk.feed(event)
    from_dicts = OpenAIResponsesStream()
    for item in items:
        from_dicts.feed(item)
    assert from_sdk.close() == from_dicts.close()
