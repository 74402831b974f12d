"""Neutral history <-> OpenAI Chat Completions, and the non-streaming decoder."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, note, settings

from toolwire.errors import HistoryError, ProtocolError, ProviderAPIError, ToolwireError, TurnError
from toolwire.history import TOOL_ERROR_PREFIX, check_history, from_openai_chat, to_openai_chat
from toolwire.messages import (
    AssistantMessage,
    Message,
    Part,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    Usage,
    UserMessage,
)
from toolwire.wire import decode_openai_chat_response

from .strategies import CHAT, FUZZ, WILD, histories

PARIS = ToolCall("call_12345xyz", "get_weather", '{"location":"Paris, France"}')
BOGOTA = ToolCall("call_67890abc", "get_weather", '{"location":"Bogotá, Colombia"}')


def test_fixture_history_decodes(chat_fixture: dict[str, Any]) -> None:
    history = from_openai_chat(chat_fixture["history"])
    assert history == [
        SystemMessage("You are a weather bot."),
        UserMessage("What's the weather like in Paris today and in Bogotá?"),
        AssistantMessage([ReasoningPart("Two cities: call the tool twice."), PARIS, BOGOTA]),
        ToolResult(
            "call_67890abc", "get_weather", "Tool error: upstream timed out", ToolStatus.ERROR
        ),
        ToolResult("call_12345xyz", "get_weather", "14°C, cloudy", ToolStatus.OK),
        AssistantMessage([TextPart("Paris is 14°C and cloudy; Bogotá's lookup failed.")]),
    ]
    check_history(history)


def test_fixture_history_reencodes_to_the_same_messages(chat_fixture: dict[str, Any]) -> None:
    expected = copy.deepcopy(chat_fixture["history"])
    expected[4]["content"] = "14°C, cloudy"  # a list of text parts comes back as its text
    assert to_openai_chat(from_openai_chat(chat_fixture["history"])) == expected


def test_assistant_encoding_shapes() -> None:
    only_text = AssistantMessage([TextPart("hi "), TextPart("there")])
    assert to_openai_chat([only_text]) == [{"role": "assistant", "content": "hi there"}]
    empty = AssistantMessage([])
    assert to_openai_chat([empty]) == [{"role": "assistant", "content": ""}]
    calls = AssistantMessage([PARIS])
    encoded = to_openai_chat([calls])[0]
    assert encoded["content"] is None
    assert encoded["tool_calls"] == [
        {
            "id": PARIS.id,
            "type": "function",
            "function": {"name": "get_weather", "arguments": PARIS.arguments},
        }
    ]
    assert "reasoning_content" not in encoded


def test_arguments_are_sent_verbatim() -> None:
    odd = ToolCall("c1", "f", '{ "b" :2,"a":1 }')
    broken = ToolCall("c2", "f", '{"a": ')
    encoded = to_openai_chat([AssistantMessage([odd, broken])])[0]
    assert [c["function"]["arguments"] for c in encoded["tool_calls"]] == [
        odd.arguments,
        broken.arguments,
    ]


def test_non_ok_status_content_is_sent_unchanged() -> None:
    history: list[Message] = [
        AssistantMessage([PARIS]),
        ToolResult(PARIS.id, PARIS.name, "Tool error: timed out after 30 s", ToolStatus.TIMEOUT),
    ]
    encoded = to_openai_chat(history)
    assert encoded[1] == {
        "role": "tool",
        "tool_call_id": PARIS.id,
        "content": "Tool error: timed out after 30 s",
    }
    assert from_openai_chat(encoded)[1].status is ToolStatus.ERROR  # type: ignore[union-attr]


def test_reasoning_field_alias_and_content_parts() -> None:
    decoded = from_openai_chat(
        [
            {"role": "developer", "content": [{"type": "text", "text": "rules"}]},
            {
                "role": "assistant",
                "reasoning": "hmm",
                "content": [{"type": "refusal", "refusal": "no"}],
            },
        ]
    )
    assert decoded == [
        SystemMessage("rules"),
        AssistantMessage([ReasoningPart("hmm"), RefusalPart("no")]),
    ]


def test_tool_message_name_field_is_used_without_a_call() -> None:
    decoded = from_openai_chat([{"role": "tool", "tool_call_id": "x", "name": "f", "content": "1"}])
    assert decoded == [ToolResult("x", "f", "1")]


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        ([{"role": "tool", "tool_call_id": "nope", "content": "x"}], "messages[0]"),
        ([{"role": "function", "name": "f", "content": "x"}], "messages[0]"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
            "messages[0].content[0]",
        ),
        ([{"role": "user"}], "messages[0].content"),
        ([{"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}}], "messages[0]"),
        (
            [
                {
                    "role": "assistant",
                    "tool_calls": [{"type": "function", "function": {"name": "f"}}],
                }
            ],
            "tool_calls[0]",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a", "type": "custom", "custom": {}}]}],
            "tool_calls[0]",
        ),
        (["not a dict"], "messages[0]"),
        ("not a list", "messages"),
    ],
)
def test_malformed_history_raises_history_error_with_location(messages: Any, where: str) -> None:
    with pytest.raises(HistoryError, match=r"\[|messages") as info:
        from_openai_chat(messages)
    assert where in str(info.value)


def test_encoding_a_non_message_raises() -> None:
    with pytest.raises(HistoryError, match="position 0"):
        to_openai_chat([{"role": "user", "content": "x"}])  # type: ignore[list-item]


# -- response decoder ----------------------------------------------------------------


def test_fixture_response_decodes_with_bad_arguments_on_one_call_only(
    chat_fixture: dict[str, Any],
) -> None:
    turn = decode_openai_chat_response(chat_fixture["response"])
    assert [c.id for c in turn.tool_calls] == ["call_12345xyz", "call_67890abc", "call_99999def"]
    assert turn.tool_calls[2].arguments == '{"to":"bob@email.com","body":"Hi'  # verbatim
    assert [r.input for r in turn.requests[:2]] == [
        {"location": "Paris, France"},
        {"location": "Bogotá, Colombia"},
    ]
    assert turn.requests[0].error is None and turn.requests[1].error is None
    assert turn.requests[2].input is None and turn.requests[2].error
    assert [r.index for r in turn.requests] == [0, 1, 2]
    assert turn.finish_reason == "tool_calls"
    assert turn.usage == Usage(
        input_tokens=82, output_tokens=57, cache_read_tokens=64, reasoning_tokens=12
    )
    assert turn.text == ""


def test_response_with_reasoning_and_text() -> None:
    turn = decode_openai_chat_response(
        {
            "choices": [
                {
                    "message": {"role": "assistant", "content": "42", "reasoning_content": "think"},
                    "finish_reason": "stop",
                }
            ]
        }
    )
    assert turn.message == AssistantMessage([ReasoningPart("think"), TextPart("42")])
    assert turn.finish_reason == "stop" and turn.requests == []


def test_response_refusal_is_its_own_part() -> None:
    turn = decode_openai_chat_response(
        {"choices": [{"message": {"content": None, "refusal": "I can't."}}]}
    )
    assert (turn.text, turn.refusal, turn.refused) == ("", "I can't.", True)
    assert turn.message.parts == [RefusalPart("I can't.")]


def _response_with(calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "choices": [
            {
                "message": {"role": "assistant", "content": None, "tool_calls": calls},
                "finish_reason": "tool_calls",
            }
        ]
    }


@pytest.mark.parametrize(
    ("calls", "problem", "index"),
    [
        ([{"type": "function", "function": {"name": "f", "arguments": "{}"}}], "missing_id", 0),
        ([{"id": "a", "type": "function", "function": {"arguments": "{}"}}], "missing_name", 0),
        (
            [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "a", "type": "function", "function": {"name": "g", "arguments": "{}"}},
            ],
            "duplicate_id",
            1,
        ),
    ],
)
def test_response_call_rules_come_from_the_assembler(
    calls: list[dict[str, Any]], problem: str, index: int
) -> None:
    with pytest.raises(TurnError) as info:
        decode_openai_chat_response(_response_with(calls))
    assert info.value.problem == problem and info.value.index == index


def test_response_empty_arguments_mean_empty_object() -> None:
    turn = decode_openai_chat_response(
        _response_with(
            [{"id": "a", "type": "function", "function": {"name": "f", "arguments": ""}}]
        )
    )
    assert turn.requests[0].input == {} and turn.tool_calls[0].arguments == "{}"


def test_response_error_body_and_protocol_errors() -> None:
    with pytest.raises(ProviderAPIError) as info:
        decode_openai_chat_response(
            {"error": {"message": "Rate limit", "type": "rate_limit_error"}}
        )
    assert info.value.error_type == "rate_limit_error"
    with pytest.raises(ProtocolError, match="no choices"):
        decode_openai_chat_response({"choices": []})
    with pytest.raises(ProtocolError, match=r"choices\[0\]\.message"):
        decode_openai_chat_response({"choices": [{"message": "hi"}]})


def test_response_from_the_openai_sdk_object(chat_fixture: dict[str, Any]) -> None:
    completion = pytest.importorskip("openai.types.chat").ChatCompletion
    sdk = completion.model_validate(chat_fixture["response"])
    assert decode_openai_chat_response(sdk) == decode_openai_chat_response(chat_fixture["response"])


# -- properties ------------------------------------------------------------------------


def chat_projection(history: list[Message]) -> list[Message]:
    """What Chat keeps of any valid history (the module docstring's rule)."""
    out: list[Message] = []
    for message in history:
        if isinstance(message, AssistantMessage):
            parts: list[Part] = []
            if message.reasoning:
                parts.append(ReasoningPart(message.reasoning))
            if message.text:
                parts.append(TextPart(message.text))
            out.append(AssistantMessage(parts + list(message.tool_calls)))
        elif isinstance(message, ToolResult):
            status = (
                ToolStatus.ERROR if message.content.startswith(TOOL_ERROR_PREFIX) else ToolStatus.OK
            )
            out.append(ToolResult(message.call_id, message.name, message.content, status))
        else:
            out.append(message)
    return out


@settings(max_examples=500, deadline=None)
@given(histories(CHAT))
def test_round_trip_is_lossless_for_representable_histories(history: list[Message]) -> None:
    encoded = to_openai_chat(history)
    assert from_openai_chat(json.loads(json.dumps(encoded))) == history


@settings(max_examples=300, deadline=None)
@given(histories(WILD))
def test_any_history_encodes_to_valid_chat_and_decodes_to_its_projection(
    history: list[Message],
) -> None:
    encoded = to_openai_chat(history)
    json.dumps(encoded, allow_nan=False)
    decoded = from_openai_chat(encoded)
    assert decoded == chat_projection(history)
    check_history(decoded)
    _assert_tool_messages_follow_their_calls(encoded)


def _assert_tool_messages_follow_their_calls(encoded: list[dict[str, Any]]) -> None:
    """OpenAI's rule: an assistant message with tool_calls is followed by a tool
    message for each of its calls, and tool messages appear nowhere else."""
    waiting: set[str] = set()
    for message in encoded:
        if message["role"] == "tool":
            waiting.remove(message["tool_call_id"])
            continue
        assert not waiting
        waiting = {c["id"] for c in message.get("tool_calls", [])}
    assert not waiting


def check_fuzzed_history(data: Any) -> None:
    """Decoding ``data`` as a history raises only a ``ToolwireError``."""
    for messages in (data, [data]):
        try:
            from_openai_chat(messages)
        except ToolwireError:
            pass


def check_fuzzed_response(data: Any) -> None:
    """Decoding ``data`` as a response body raises only a ``ToolwireError``."""
    for body in (data, {"choices": [data]}, {"choices": [{"message": data}]}):
        try:
            decode_openai_chat_response(body)
        except ToolwireError:
            pass


@settings(max_examples=300, deadline=None)
@given(FUZZ)
def test_fuzzed_data_raises_only_toolwire_errors(data: Any) -> None:
    """Any JSON-like data, decoded as a history and as a response: a result or a
    ``ToolwireError``, nothing else. Both decoders get the same 300 examples: drawing one
    is nearly all of its cost, so each is drawn once and fed to both."""
    note("as a history")
    check_fuzzed_history(data)
    note("as a response")
    check_fuzzed_response(data)
