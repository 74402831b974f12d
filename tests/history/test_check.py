"""check_history and missing_results: the one-result-per-call rule."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import HistoryError
from toolwire.history import check_history, missing_results
from toolwire.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)

from .strategies import LIGHT, histories


def call(call_id: str, name: str = "get_weather") -> ToolCall:
    return ToolCall(call_id, name, '{"city": "Paris"}')


def result(
    call_id: str, name: str = "get_weather", status: ToolStatus = ToolStatus.OK
) -> ToolResult:
    return ToolResult(call_id, name, "sunny", status)


def two_calls() -> list[Message]:
    return [
        SystemMessage("be brief"),
        UserMessage("weather?"),
        AssistantMessage([ReasoningPart("think"), TextPart("checking"), call("a"), call("b")]),
    ]


def test_valid_history_passes_with_results_in_any_order() -> None:
    check_history([*two_calls(), result("b"), result("a"), AssistantMessage([TextPart("done")])])


def test_empty_history_passes() -> None:
    check_history([])


def test_every_status_counts_as_a_result() -> None:
    for status in ToolStatus:
        check_history([*two_calls(), result("a", status=status), result("b", status=status)])


def test_missing_result_at_the_end_names_the_call() -> None:
    with pytest.raises(HistoryError) as info:
        check_history([*two_calls(), result("a")])
    assert info.value.call_id == "b"
    assert "position 2" in str(info.value) and "end of the history" in str(info.value)


def test_missing_result_before_next_assistant_message() -> None:
    history = [*two_calls(), result("a"), AssistantMessage([TextPart("hm")]), result("b")]
    with pytest.raises(HistoryError) as info:
        check_history(history)
    assert info.value.call_id == "b"
    assert "assistant message at position 4" in str(info.value)


def test_user_message_between_call_and_result_is_rejected() -> None:
    history = [*two_calls(), result("a"), UserMessage("hurry"), result("b")]
    with pytest.raises(HistoryError) as info:
        check_history(history)
    assert info.value.call_id == "b"
    assert "user message at position 4" in str(info.value)


def test_orphan_result_is_named() -> None:
    with pytest.raises(HistoryError) as info:
        check_history([UserMessage("hi"), result("ghost")])
    assert info.value.call_id == "ghost"
    assert "position 1" in str(info.value) and "no earlier assistant message" in str(info.value)


def test_result_before_its_call_is_an_orphan() -> None:
    with pytest.raises(HistoryError) as info:
        check_history([result("a"), AssistantMessage([call("a")]), result("a")])
    assert info.value.call_id == "a"
    assert "position 0" in str(info.value)


def test_second_result_for_one_call() -> None:
    with pytest.raises(HistoryError) as info:
        check_history([*two_calls(), result("a"), result("b"), result("a")])
    assert info.value.call_id == "a"
    assert "second result" in str(info.value) and "position 3" in str(info.value)


def test_duplicate_call_id_within_one_message() -> None:
    with pytest.raises(HistoryError) as info:
        check_history([AssistantMessage([call("a"), call("a")])])
    assert info.value.call_id == "a"
    assert "repeats" in str(info.value)


def test_call_ids_may_repeat_across_turns() -> None:
    """Servers that number calls per turn send ``call_0`` in every turn: a result belongs
    to the turn right before it, so the history is valid (it ended runs with a
    HistoryError blamed on the caller)."""
    history: list[Message] = [
        AssistantMessage([call("call_0")]),
        result("call_0"),
        AssistantMessage([call("call_0"), call("call_1")]),
        result("call_1"),
        result("call_0"),
    ]
    check_history(history)
    assert missing_results(history) == []


def test_a_result_for_an_older_turn_is_named_as_such() -> None:
    history: list[Message] = [
        AssistantMessage([call("a")]),
        result("a"),
        AssistantMessage([call("b")]),
        result("b"),
        result("a"),
    ]
    with pytest.raises(HistoryError) as info:
        check_history(history)
    assert info.value.call_id == "a"
    assert "position 4" in str(info.value) and "position 0" in str(info.value)


def test_missing_results_keys_calls_by_turn() -> None:
    history: list[Message] = [
        AssistantMessage([call("call_0")]),
        result("call_0"),
        AssistantMessage([call("call_0")]),
    ]
    assert missing_results(history) == [call("call_0")]


def test_result_naming_another_tool() -> None:
    with pytest.raises(HistoryError) as info:
        check_history([AssistantMessage([call("a", "search")]), result("a", "get_weather")])
    assert info.value.call_id == "a"
    assert "'search'" in str(info.value)


BAD_ARGUMENTS: Any = {"a": 1}


@pytest.mark.parametrize(
    "bad", [ToolCall("", "f", "{}"), ToolCall("x", "", "{}"), ToolCall("x", "f", BAD_ARGUMENTS)]
)
def test_unusable_call_fields(bad: ToolCall) -> None:
    with pytest.raises(HistoryError):
        check_history([AssistantMessage([bad])])


def test_not_a_message_entry() -> None:
    with pytest.raises(HistoryError) as info:
        check_history([UserMessage("hi"), {"role": "user", "content": "x"}])  # type: ignore[list-item]
    assert "position 1" in str(info.value) and "dict" in str(info.value)


def test_not_a_part() -> None:
    with pytest.raises(HistoryError, match="part 1"):
        check_history([AssistantMessage([TextPart("a"), "b"])])  # type: ignore[list-item]


def test_result_with_bad_fields() -> None:
    with pytest.raises(HistoryError):
        check_history([AssistantMessage([call("a")]), ToolResult("a", "get_weather", None)])  # type: ignore[arg-type]
    with pytest.raises(HistoryError, match="ToolStatus"):
        check_history([AssistantMessage([call("a")]), ToolResult("a", "get_weather", "x", "ok")])  # type: ignore[arg-type]


def test_missing_results_lists_unanswered_calls_in_order() -> None:
    history = [*two_calls(), result("b")]
    assert missing_results(history) == [call("a")]
    assert missing_results([*two_calls()]) == [call("a"), call("b")]
    assert missing_results([*two_calls(), result("a"), result("b")]) == []


def test_missing_results_ignores_results_before_the_call() -> None:
    assert missing_results([result("a"), AssistantMessage([call("a")])]) == [call("a")]


def test_missing_results_rejects_non_messages() -> None:
    with pytest.raises(HistoryError):
        missing_results([42])  # type: ignore[list-item]


@settings(max_examples=300, deadline=None)
@given(histories(LIGHT))
def test_generated_histories_pass(history: list[Message]) -> None:
    check_history(history)
    assert missing_results(history) == []


@settings(max_examples=300, deadline=None)
@given(histories(LIGHT), st.data())
def test_dropping_any_result_is_caught_and_named(
    history: list[Message], data: st.DataObject
) -> None:
    positions = [i for i, m in enumerate(history) if isinstance(m, ToolResult)]
    if not positions:
        return
    dropped = history[data.draw(st.sampled_from(positions))]
    assert isinstance(dropped, ToolResult)
    shorter = [m for m in history if m is not dropped]
    with pytest.raises(HistoryError) as info:
        check_history(shorter)
    assert info.value.call_id == dropped.call_id
    assert [c.id for c in missing_results(shorter)] == [dropped.call_id]


@settings(max_examples=300, deadline=None)
@given(histories(LIGHT), st.data())
def test_duplicating_any_result_is_caught(history: list[Message], data: st.DataObject) -> None:
    positions = [i for i, m in enumerate(history) if isinstance(m, ToolResult)]
    if not positions:
        return
    position = data.draw(st.sampled_from(positions))
    duplicated = [*history[: position + 1], history[position], *history[position + 1 :]]
    with pytest.raises(HistoryError) as info:
        check_history(duplicated)
    assert info.value.call_id == history[position].call_id  # type: ignore[union-attr]


def test_check_is_linear() -> None:
    """Many turns of many calls: one pass, no quadratic rescans (checked by counting
    work, never by timing: the dict of waiting calls is emptied turn by turn)."""
    history: list[Message] = []
    for turn in range(2000):
        calls = [call(f"c{turn}_{i}") for i in range(5)]
        history.append(AssistantMessage(list(calls)))
        history.extend(result(c.id) for c in calls)
    check_history(history)
    assert missing_results(history) == []
