from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import formats
from toolwire.errors import FormatError, TurnError
from toolwire.formats import TextTurnDecoder
from toolwire.messages import ReasoningPart, TextPart, ToolCall
from toolwire.turn import Turn
from toolwire.wire import ToolCallReady, ToolCallStarted

from .conftest import split_at

QWEN = (
    "<think>\nsearch both\n</think>\n\nLet me look.\n"
    '<tool_call>\n{"name": "explore_code", "arguments": {"query": "login"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "explore_code", "arguments": {"query": "session"}}\n</tool_call>'
)


def decode(text: str, step: int, finish: str = "stop") -> tuple[list[object], object]:
    decoder = TextTurnDecoder(formats.for_model("Qwen/Qwen3-8B"), id_prefix="call_")
    events = []
    for i in range(0, len(text), step):
        events += decoder.feed(text[i : i + step])
    return events, decoder.close(finish)


@pytest.mark.parametrize("step", [1, 3, 7, 1000])
def test_raw_text_becomes_the_same_turn_however_split(step: int) -> None:
    events, turn = decode(QWEN, step)
    # The template's newlines around </think> and the calls are separators, not text.
    assert turn.message.parts == [
        ReasoningPart("search both"),
        TextPart("Let me look."),
        ToolCall("call_0", "explore_code", '{"query": "login"}'),
        ToolCall("call_1", "explore_code", '{"query": "session"}'),
    ]
    assert turn.finish_reason == "tool_calls"
    assert [r.input for r in turn.requests] == [{"query": "login"}, {"query": "session"}]
    assert [e.call.id for e in events if isinstance(e, ToolCallReady)] == ["call_0", "call_1"]
    assert turn == decode(QWEN, 1000)[1]


def test_plain_answer_keeps_stop() -> None:
    _, turn = decode("Just text, no calls.", 4)
    assert (turn.text, turn.finish_reason, turn.tool_calls) == ("Just text, no calls.", "stop", [])


def test_cut_off_inside_a_call_is_a_format_error_when_strict() -> None:
    decoder = TextTurnDecoder(formats.for_model("Qwen/Qwen3-8B"), strict=True)
    with pytest.raises(FormatError):
        decoder.feed(QWEN[:-30])
        decoder.close("length")


def test_ids_carried_by_the_format_follow_the_turn_rules() -> None:
    # Kimi K2 writes its own call ids; a repeated one breaks the turn like any provider's.
    call = "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
    text = f"<|tool_calls_section_begin|>{call}{call}<|tool_calls_section_end|>"
    decoder = TextTurnDecoder(formats.for_model("moonshotai/Kimi-K2-Instruct"))
    decoder.feed(text)
    with pytest.raises(TurnError) as info:
        decoder.close()
    assert info.value.problem == "duplicate_id"


QWEN25_CALLS = (
    "Sure.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
)


def no_calls_turn(pieces: list[str]) -> tuple[list[object], Turn]:
    fmt = formats.get("hermes", "qwen2.5", tools=[_weather_tool()])
    decoder = TextTurnDecoder(fmt, require_end=True, calls=False)
    events: list[object] = []
    for piece in pieces:
        events += decoder.feed(piece)
    events += decoder.end("stop")
    return events, decoder.close()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, len(QWEN25_CALLS)), max_size=8))
def test_with_no_calls_allowed_the_markup_stays_text_however_split(cuts: list[int]) -> None:
    """tool_choice none (or no tools): nothing is read as a call; the text is verbatim,
    and a notice says it held two calls."""
    events, turn = no_calls_turn(split_at(QWEN25_CALLS, cuts))
    assert turn.tool_calls == [] and turn.requests == []
    assert turn.text == QWEN25_CALLS
    assert turn.finish_reason == "stop"
    assert [(n.kind, "2 tool call(s)" in n.message) for n in turn.notices] == [
        ("calls_in_content", True)
    ]
    assert not any(isinstance(e, (ToolCallStarted, ToolCallReady)) for e in events)
    assert turn == no_calls_turn([QWEN25_CALLS])[1]


def test_with_no_calls_allowed_plain_text_has_no_notice() -> None:
    _, turn = no_calls_turn(["It is ", "sunny."])
    assert turn.text == "It is sunny." and turn.notices == [] and turn.tool_calls == []


def _weather_tool() -> dict[str, object]:
    return {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
