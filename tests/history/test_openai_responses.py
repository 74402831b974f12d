"""Neutral history <-> OpenAI Responses input items, and the non-streaming decoder."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, note, settings

from toolwire.errors import HistoryError, ProtocolError, ProviderAPIError, ToolwireError, TurnError
from toolwire.history import (
    TOOL_ERROR_PREFIX,
    check_history,
    from_responses_input,
    to_responses_input,
)
from toolwire.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    Usage,
    UserMessage,
)
from toolwire.wire import decode_responses_response, responses_finish_reason

from .strategies import FUZZ, RESPONSES, WILD, histories

RS_ID = "rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7"
PARIS = ToolCall("call_12345xyz", "get_weather", '{"location":"Paris, France"}')


def test_fixture_input_decodes(responses_fixture: dict[str, Any]) -> None:
    history = from_responses_input(responses_fixture["instructions"], responses_fixture["input"])
    reasoning = ReasoningPart(
        "**Checking the weather**\n\nI should call get_weather.",
        redacted="gAAAAABoIPOD3xKZ3g",
        id=RS_ID,
    )
    assert history == [
        SystemMessage("You are a weather bot."),
        UserMessage("What's the weather like in Paris today?"),
        AssistantMessage([reasoning, PARIS]),
        ToolResult(PARIS.id, "get_weather", "14°C, cloudy"),
        AssistantMessage([TextPart("It is 14°C and cloudy in Paris.")]),
        SystemMessage("Answer in French from now on."),
    ]
    check_history(history)


def test_encoding_shapes() -> None:
    history: list[Message] = [
        SystemMessage("be brief"),
        UserMessage("hi"),
        AssistantMessage(
            [ReasoningPart("plan", redacted="enc", id="rs_1"), TextPart("calling"), PARIS]
        ),
        ToolResult(PARIS.id, PARIS.name, "Tool error: denied", ToolStatus.DENIED),
        SystemMessage("later rule"),
    ]
    instructions, items = to_responses_input(history)
    assert instructions == "be brief"
    assert items == [
        {"type": "message", "role": "user", "content": "hi"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": "enc",
        },
        {"type": "message", "role": "assistant", "content": "calling"},
        {
            "type": "function_call",
            "call_id": PARIS.id,
            "name": "get_weather",
            "arguments": PARIS.arguments,
        },
        {"type": "function_call_output", "call_id": PARIS.id, "output": "Tool error: denied"},
        {"type": "message", "role": "system", "content": "later rule"},
    ]


def test_no_instructions_without_a_leading_system_message() -> None:
    instructions, items = to_responses_input([UserMessage("hi"), SystemMessage("x")])
    assert instructions is None and items[1]["role"] == "system"


def test_reasoning_without_id_is_left_out() -> None:
    _, items = to_responses_input(
        [AssistantMessage([ReasoningPart("foreign", signature="sig"), TextPart("a")])]
    )
    assert [item["type"] for item in items] == ["message"]


def test_empty_reasoning_sends_an_empty_summary() -> None:
    _, items = to_responses_input(
        [AssistantMessage([ReasoningPart("", redacted="enc", id="rs_1")])]
    )
    assert items == [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}]


def test_reasoning_text_content_is_read_without_summary() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_2",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "raw"}],
    }
    assert from_responses_input(None, [item]) == [
        AssistantMessage([ReasoningPart("raw", id="rs_2")])
    ]


@pytest.mark.parametrize(
    ("items", "where"),
    [
        ([{"type": "function_call_output", "call_id": "nope", "output": "x"}], "input[0]"),
        ([{"type": "item_reference", "id": "x"}], "input[0]"),
        ([{"type": "function_call", "name": "f", "arguments": "{}"}], "input[0]"),
        (
            [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}],
            "input[0].content[0]",
        ),
        ([{"role": "critic", "content": "x"}], "input[0]"),
        (
            [{"type": "reasoning", "id": "r", "summary": [{"type": "summary_text"}]}],
            "input[0].summary[0]",
        ),
        ([3], "input[0]"),
    ],
)
def test_malformed_input_raises_history_error_with_location(items: Any, where: str) -> None:
    with pytest.raises(HistoryError) as info:
        from_responses_input(None, items)
    assert where in str(info.value)


def test_bad_instructions_raise() -> None:
    with pytest.raises(HistoryError, match="instructions"):
        from_responses_input(["x"], [])  # type: ignore[arg-type]


def test_encoding_a_non_message_raises() -> None:
    with pytest.raises(HistoryError, match="position 1"):
        to_responses_input([UserMessage("a"), "b"])  # type: ignore[list-item]


# -- response decoder ----------------------------------------------------------------


def test_fixture_response_decodes(responses_fixture: dict[str, Any]) -> None:
    turn = decode_responses_response(responses_fixture["response"])
    assert turn.message.parts[0] == ReasoningPart(
        "**Looking up two cities**", redacted="gAAAAABoIPOD", id=RS_ID
    )
    assert [(c.id, c.name) for c in turn.tool_calls] == [
        ("call_12345xyz", "get_weather"),
        ("call_67890abc", "get_weather"),
    ]
    assert [r.input for r in turn.requests] == [
        {"location": "Paris, France"},
        {"location": "Bogotá, Colombia"},
    ]
    assert [r.index for r in turn.requests] == [1, 3]  # the items' positions in ``output``
    assert turn.finish_reason == "tool_calls"
    assert turn.usage == Usage(
        input_tokens=291, output_tokens=90, cache_read_tokens=256, reasoning_tokens=64
    )
    assert turn.notices == []  # the web search item is kept verbatim (a ProviderPart)
    assert [p.kind for p in turn.message.parts] == [
        "reasoning",
        "tool_call",
        "provider",
        "tool_call",
    ]


def test_response_with_text_only() -> None:
    body = {
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
            }
        ],
    }
    turn = decode_responses_response(body)
    assert turn.text == "Hi" and turn.finish_reason == "stop"


@pytest.mark.parametrize(
    ("details", "reason"),
    [
        ({"reason": "max_output_tokens"}, "length"),
        ({"reason": "content_filter"}, "content_filter"),
        (None, "length"),
        ({"reason": "max_messages"}, "max_messages"),
    ],
)
def test_incomplete_status_maps_through_the_table(details: Any, reason: str) -> None:
    assert (
        responses_finish_reason(
            {"status": "incomplete", "incomplete_details": details}, has_tool_calls=False
        )
        == reason
    )


def test_failed_cancelled_and_unfinished_responses() -> None:
    failed = {
        "status": "failed",
        "error": {"code": "server_error", "message": "boom"},
        "output": [],
    }
    with pytest.raises(ProviderAPIError) as info:
        decode_responses_response(failed)
    assert info.value.error_type == "server_error" and "boom" in str(info.value)
    with pytest.raises(ProviderAPIError, match="cancelled"):
        decode_responses_response({"status": "cancelled", "error": None, "output": []})
    with pytest.raises(ProtocolError, match="in_progress"):
        decode_responses_response({"status": "in_progress", "output": []})


def test_response_call_rules_come_from_the_assembler() -> None:
    calls = [
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "a", "name": "g", "arguments": "{}"},
    ]
    with pytest.raises(TurnError) as info:
        decode_responses_response({"status": "completed", "output": calls})
    assert info.value.problem == "duplicate_id" and info.value.index == 1
    with pytest.raises(TurnError) as info:
        decode_responses_response(
            {
                "status": "completed",
                "output": [{"type": "function_call", "name": "f", "arguments": ""}],
            }
        )
    assert info.value.problem == "missing_id"


def test_response_from_the_openai_sdk_object(responses_fixture: dict[str, Any]) -> None:
    response_type = pytest.importorskip("openai.types.responses").Response
    body = dict(responses_fixture["response"])
    body["output"] = [item for item in body["output"] if item["type"] != "web_search_call"]
    body.update(
        tools=[],
        tool_choice="auto",
        parallel_tool_calls=True,
        metadata={},
        temperature=1.0,
        top_p=1.0,
    )
    body["usage"] = {
        **body["usage"],
        "input_tokens_details": {"cached_tokens": 256, "cache_write_tokens": 0},
    }
    sdk = response_type.model_validate(body)
    turn = decode_responses_response(sdk)
    assert turn == decode_responses_response(body)
    assert len(turn.tool_calls) == 2


# -- properties ------------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(histories(RESPONSES))
def test_round_trip_is_lossless_for_representable_histories(history: list[Message]) -> None:
    instructions, items = to_responses_input(history)
    assert from_responses_input(instructions, json.loads(json.dumps(items))) == history


@settings(max_examples=300, deadline=None)
@given(histories(WILD))
def test_any_history_encodes_and_decodes_to_a_valid_history(history: list[Message]) -> None:
    instructions, items = to_responses_input(history)
    json.dumps(items, allow_nan=False)
    decoded = from_responses_input(instructions, items)
    check_history(decoded)
    # what is kept: every call verbatim, every result's text, the reasoning items with an id
    assert [c for m in decoded if isinstance(m, AssistantMessage) for c in m.tool_calls] == [
        c for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls
    ]
    results = [m for m in history if isinstance(m, ToolResult)]
    assert [(m.call_id, m.content) for m in decoded if isinstance(m, ToolResult)] == [
        (m.call_id, m.content) for m in results
    ]
    for message in decoded:
        if isinstance(message, ToolResult):
            assert message.status is (
                ToolStatus.ERROR if message.content.startswith(TOOL_ERROR_PREFIX) else ToolStatus.OK
            )


def check_fuzzed_input(data: Any) -> None:
    """Decoding ``data`` as an input raises only a ``ToolwireError``."""
    for instructions, items in ((None, data), (None, [data]), (data, [])):
        try:
            from_responses_input(instructions, items)
        except ToolwireError:
            pass


def check_fuzzed_response(data: Any) -> None:
    """Decoding ``data`` as a response body raises only a ``ToolwireError``."""
    for body in (data, {"status": "completed", "output": [data]}, {"output": data}):
        try:
            decode_responses_response(body)
        except ToolwireError:
            pass


@settings(max_examples=300, deadline=None)
@given(FUZZ)
def test_fuzzed_data_raises_only_toolwire_errors(data: Any) -> None:
    """Any JSON-like data, decoded as an input and as a response: a result or a
    ``ToolwireError``, nothing else. Both decoders get the same 300 examples: drawing one
    is nearly all of its cost, so each is drawn once and fed to both."""
    note("as an input")
    check_fuzzed_input(data)
    note("as a response")
    check_fuzzed_response(data)


def test_adjacent_reasoning_items_stay_separate_parts() -> None:
    output = [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "E1"},
        {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "x"}]},
    ]
    assert decode_responses_response({"status": "completed", "output": output}).message.parts == [
        ReasoningPart("", redacted="E1", id="rs_1"),
        ReasoningPart("x", id="rs_2"),
    ]
