"""Neutral history <-> Anthropic Messages, and the non-streaming decoder."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, note, settings

from toolwire.errors import HistoryError, ProtocolError, ProviderAPIError, ToolwireError, TurnError
from toolwire.history import ANTHROPIC_STOP_REASONS, check_history, from_anthropic, to_anthropic
from toolwire.messages import (
    AssistantMessage,
    Message,
    Part,
    ProviderPart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    Usage,
    UserMessage,
)
from toolwire.wire import INVALID_ARGUMENTS_KEY, decode_anthropic_response

from .strategies import ANTHROPIC, FUZZ, WILD, histories

PARIS = ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", '{"location": "Paris, France"}')
BOGOTA = ToolCall(
    "toolu_01B19q90qw90lq917835lq8", "get_weather", '{"location": "Bogotá, Colombia"}'
)
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


def fixture_history() -> list[Message]:
    return [
        SystemMessage("You are a weather bot."),
        UserMessage("What's the weather like in Paris and in Bogotá?"),
        AssistantMessage(
            [
                ReasoningPart("Two cities: call the tool twice.", signature=SIGNATURE),
                TextPart("I'll check both."),
                PARIS,
                BOGOTA,
            ]
        ),
        ToolResult(PARIS.id, "get_weather", "14°C, cloudy"),
        ToolResult(BOGOTA.id, "get_weather", "upstream timed out", ToolStatus.ERROR),
        UserMessage("Also, should I bring an umbrella?"),
        AssistantMessage(
            [
                ReasoningPart("", redacted=REDACTED),
                TextPart("Paris is 14°C and cloudy: take an umbrella."),
            ]
        ),
    ]


def test_fixture_decodes(anthropic_fixture: dict[str, Any]) -> None:
    history = from_anthropic(anthropic_fixture["system"], anthropic_fixture["messages"])
    assert history == fixture_history()
    check_history(history)


def test_fixture_reencodes_to_the_same_turns(anthropic_fixture: dict[str, Any]) -> None:
    system, turns = to_anthropic(fixture_history())
    assert system == anthropic_fixture["system"]
    expected = json.loads(json.dumps(anthropic_fixture["messages"]))
    expected[0]["content"] = [{"type": "text", "text": expected[0]["content"]}]  # always blocks
    expected[2]["content"][1]["content"] = "upstream timed out"  # text blocks come back as a string
    assert turns == expected


def test_results_of_one_turn_go_in_one_user_message_first() -> None:
    history: list[Message] = [
        UserMessage("go"),
        AssistantMessage([PARIS, BOGOTA]),
        ToolResult(BOGOTA.id, BOGOTA.name, "ok"),
        ToolResult(PARIS.id, PARIS.name, "denied by user", ToolStatus.DENIED),
        UserMessage("and?"),
        UserMessage("hello?"),
    ]
    _, turns = to_anthropic(history)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": BOGOTA.id, "content": "ok"},
        {
            "type": "tool_result",
            "tool_use_id": PARIS.id,
            "content": "denied by user",
            "is_error": True,
        },
        {"type": "text", "text": "and?"},
        {"type": "text", "text": "hello?"},
    ]


@pytest.mark.parametrize("status", [s for s in ToolStatus if s is not ToolStatus.OK])
def test_every_non_ok_status_sets_is_error(status: ToolStatus) -> None:
    _, turns = to_anthropic(
        [AssistantMessage([PARIS]), ToolResult(PARIS.id, PARIS.name, "x", status)]
    )
    assert turns[1]["content"][0]["is_error"] is True


def test_system_messages_are_hoisted_and_joined() -> None:
    system, turns = to_anthropic([SystemMessage("a"), UserMessage("u"), SystemMessage("b")])
    assert system == "a\n\nb" and len(turns) == 1
    assert to_anthropic([UserMessage("u")])[0] is None


def test_system_as_blocks_decodes_to_one_message_each() -> None:
    system = [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "b"},
    ]
    assert from_anthropic(system, []) == [SystemMessage("a"), SystemMessage("b")]


def test_tool_use_input_is_the_parsed_arguments() -> None:
    calls: list[Part] = [
        ToolCall("a", "f", '{"x":[1,2]}'),
        ToolCall("b", "f", ""),
        ToolCall("c", "f", "  "),
    ]
    _, turns = to_anthropic([AssistantMessage(calls)])
    assert [block["input"] for block in turns[0]["content"]] == [{"x": [1, 2]}, {}, {}]


@pytest.mark.parametrize(
    "arguments", ['{"a": ', "[1, 2]", '"text"', "42", "NaN", '{"a": NaN}', "{} {}"]
)
def test_arguments_that_are_no_json_object_are_wrapped_and_come_back(arguments: str) -> None:
    history: list[Message] = [AssistantMessage([ToolCall("a", "f", arguments)])]
    _, turns = to_anthropic(history)
    block = turns[0]["content"][0]
    assert block["input"] == {INVALID_ARGUMENTS_KEY: arguments}
    json.dumps(turns, allow_nan=False)  # sendable
    assert from_anthropic(None, turns) == history


def test_foreign_and_empty_parts_are_left_out() -> None:
    parts: list[Part] = [
        ReasoningPart("openai's", redacted="enc", id="rs_1"),
        ReasoningPart("unsigned"),
        TextPart(""),
        TextPart("kept"),
    ]
    _, turns = to_anthropic(
        [
            UserMessage("q"),
            AssistantMessage(parts),
            AssistantMessage([ReasoningPart("x")]),
            UserMessage("r"),
        ]
    )
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "kept"}]},
        {"role": "user", "content": [{"type": "text", "text": "r"}]},
    ]


def test_string_contents_decode() -> None:
    turns = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "assistant", "content": ""},
    ]
    assert from_anthropic("", turns) == [
        SystemMessage(""),
        UserMessage("hi"),
        AssistantMessage([TextPart("hello")]),
        AssistantMessage([]),
    ]


@pytest.mark.parametrize(
    ("system", "messages", "where"),
    [
        (
            None,
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}],
                }
            ],
            "messages[0].content[0]",
        ),
        (
            None,
            [{"role": "user", "content": [{"type": "image", "source": {}}]}],
            "messages[0].content[0]",
        ),
        (
            None,
            [{"role": "assistant", "content": [{"type": "image", "source": {}}]}],
            "messages[0].content[0]",
        ),
        (
            None,
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "a", "name": "f", "input": [1]}],
                }
            ],
            "messages[0].content[0]",
        ),
        (
            None,
            [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}],
            "messages[0].content[0]",
        ),
        (None, [{"role": "system", "content": "x"}], "messages[0]"),
        ([{"type": "image"}], [], "system[0]"),
        (3, [], "system"),
    ],
)
def test_malformed_history_raises_history_error_with_location(
    system: Any, messages: Any, where: str
) -> None:
    with pytest.raises(HistoryError) as info:
        from_anthropic(system, messages)
    assert where in str(info.value)


def test_encoding_a_non_message_raises() -> None:
    with pytest.raises(HistoryError, match="position 0"):
        to_anthropic([None])  # type: ignore[list-item]


# -- response decoder ----------------------------------------------------------------


def test_fixture_response_decodes(anthropic_fixture: dict[str, Any]) -> None:
    turn = decode_anthropic_response(anthropic_fixture["response"])
    assert turn.message == AssistantMessage(
        [
            ReasoningPart(
                "The user wants the weather in two cities.", signature="EqQBCgIYAhIM1gbcDa9GJwZA"
            ),
            TextPart("I'll check both cities."),
            ToolCall(
                "toolu_01A09q90qw90lq917835lq9",
                "get_weather",
                '{"location": "Paris, France", "unit": "celsius"}',
            ),
            ToolCall("toolu_01B19q90qw90lq917835lq8", "get_time", "{}"),
        ]
    )
    assert [r.input for r in turn.requests] == [
        {"location": "Paris, France", "unit": "celsius"},
        {},
    ]
    assert [r.index for r in turn.requests] == [2, 3]  # the blocks' positions
    assert turn.finish_reason == "tool_calls"
    assert turn.usage == Usage(
        input_tokens=2572, output_tokens=91, cache_read_tokens=2000, cache_write_tokens=100
    )
    assert turn.notices == []


def test_redacted_thinking_in_a_response() -> None:
    body = {
        "content": [
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "text", "text": "ok"},
        ],
        "stop_reason": "end_turn",
    }
    turn = decode_anthropic_response(body)
    assert turn.message == AssistantMessage([ReasoningPart("", redacted=REDACTED), TextPart("ok")])
    assert turn.finish_reason == "stop"


@pytest.mark.parametrize(
    ("stop", "reason"), [*ANTHROPIC_STOP_REASONS.items(), ("pause_turn", "pause_turn")]
)
def test_stop_reasons_map_through_the_table(stop: str, reason: str) -> None:
    assert decode_anthropic_response({"content": [], "stop_reason": stop}).finish_reason == reason


def test_server_tool_blocks_are_kept_verbatim() -> None:
    body = {
        "content": [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "x"},
            },
            {"type": "text", "text": "found"},
        ],
        "stop_reason": "end_turn",
    }
    turn = decode_anthropic_response(body)
    assert turn.text == "found" and turn.tool_calls == [] and turn.requests == []
    assert turn.message.parts[0] == ProviderPart("anthropic", "server_tool_use", body["content"][0])
    assert turn.notices == []


def test_response_call_rules_come_from_the_assembler() -> None:
    duplicate = [
        {"type": "tool_use", "id": "a", "name": "f", "input": {}},
        {"type": "tool_use", "id": "a", "name": "g", "input": {}},
    ]
    with pytest.raises(TurnError) as info:
        decode_anthropic_response({"content": duplicate, "stop_reason": "tool_use"})
    assert info.value.problem == "duplicate_id" and info.value.index == 1
    with pytest.raises(TurnError) as info:
        decode_anthropic_response({"content": [{"type": "tool_use", "id": "a", "input": {}}]})
    assert info.value.problem == "missing_name" and info.value.index == 0


def test_error_body_and_protocol_errors() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(ProviderAPIError) as info:
        decode_anthropic_response(error)
    assert info.value.error_type == "overloaded_error"
    with pytest.raises(ProtocolError, match=r"response\.content"):
        decode_anthropic_response({"content": "hi"})
    with pytest.raises(ProtocolError, match="input must be an object"):
        decode_anthropic_response(
            {"content": [{"type": "tool_use", "id": "a", "name": "f", "input": "x"}]}
        )


def test_response_from_the_anthropic_sdk_object(anthropic_fixture: dict[str, Any]) -> None:
    message_type = pytest.importorskip("anthropic.types").Message
    sdk = message_type.model_validate(anthropic_fixture["response"])
    assert decode_anthropic_response(sdk) == decode_anthropic_response(
        anthropic_fixture["response"]
    )


# -- properties ------------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(histories(ANTHROPIC))
def test_round_trip_is_lossless_for_representable_histories(history: list[Message]) -> None:
    system, turns = to_anthropic(history)
    assert from_anthropic(system, json.loads(json.dumps(turns))) == history


@settings(max_examples=300, deadline=None)
@given(histories(WILD))
def test_any_history_encodes_to_valid_anthropic_turns(history: list[Message]) -> None:
    system, turns = to_anthropic(history)
    json.dumps(turns, allow_nan=False)
    _assert_anthropic_rules(turns)
    decoded = from_anthropic(system, turns)
    check_history(decoded)
    calls = [c for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert [
        (c.id, c.name) for m in decoded if isinstance(m, AssistantMessage) for c in m.tool_calls
    ] == [(c.id, c.name) for c in calls]
    statuses = [m.status.is_error for m in history if isinstance(m, ToolResult)]
    assert [m.status is ToolStatus.ERROR for m in decoded if isinstance(m, ToolResult)] == statuses


def _assert_anthropic_rules(turns: list[dict[str, Any]]) -> None:
    """Alternating roles, no empty turn, each turn's results first in the next user
    turn, exactly one result per tool_use, no empty assistant text, inputs are objects."""
    for before, after in itertools.pairwise(turns):
        assert before["role"] != after["role"]
    for number, turn in enumerate(turns):
        assert turn["content"]
        if turn["role"] != "assistant":
            continue
        uses = [b["id"] for b in turn["content"] if b["type"] == "tool_use"]
        assert all(isinstance(b["input"], dict) for b in turn["content"] if b["type"] == "tool_use")
        assert all(b["text"] for b in turn["content"] if b["type"] == "text")
        if uses:
            following = turns[number + 1]["content"]
            answered = [
                b["tool_use_id"] for b in following[: len(uses)] if b["type"] == "tool_result"
            ]
            assert sorted(answered) == sorted(uses)


def check_fuzzed_history(data: Any) -> None:
    """Decoding ``data`` as a history raises only a ``ToolwireError``."""
    for system, messages in (
        (None, data),
        (data, []),
        (None, [data]),
        (None, [{"role": "assistant", "content": data}]),
    ):
        try:
            from_anthropic(system, messages)
        except ToolwireError:
            pass


def check_fuzzed_response(data: Any) -> None:
    """Decoding ``data`` as a response body raises only a ``ToolwireError``."""
    for body in (data, {"content": data}, {"content": [data]}):
        try:
            decode_anthropic_response(body)
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


def test_adjacent_thinking_blocks_stay_separate_parts() -> None:
    body = {
        "content": [
            {"type": "thinking", "thinking": "a", "signature": "S1"},
            {"type": "redacted_thinking", "data": "D"},
        ],
        "stop_reason": "end_turn",
    }
    assert decode_anthropic_response(body).message.parts == [
        ReasoningPart("a", signature="S1"),
        ReasoningPart("", redacted="D"),
    ]
