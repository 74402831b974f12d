"""Resuming a saved history: every unanswered call gets one not_executed result."""

from __future__ import annotations

from toolwire.history import check_history
from toolwire.messages import (
    AssistantMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)
from toolwire.run.resume import answer_missing


def _turn(*ids: str) -> AssistantMessage:
    return AssistantMessage([ToolCall(i, "t", "{}") for i in ids])


def test_nothing_missing_is_a_copy() -> None:
    history = [UserMessage("hi"), _turn("a"), ToolResult("a", "t", "ok")]
    assert answer_missing(history) == history
    assert answer_missing(history) is not history


def test_missing_results_go_after_their_own_turn() -> None:
    history = [
        UserMessage("hi"),
        _turn("a", "b", "c"),
        ToolResult("b", "t", "ok"),
        UserMessage("again"),
        _turn("d"),
    ]
    done = answer_missing(history)
    check_history(done)
    assert [type(m).__name__ for m in done] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResult",
        "ToolResult",
        "ToolResult",
        "UserMessage",
        "AssistantMessage",
        "ToolResult",
    ]
    added = [m for m in done if isinstance(m, ToolResult) and m.status is ToolStatus.NOT_EXECUTED]
    assert [m.call_id for m in added] == ["a", "c"]
    assert all("not executed" in m.content for m in added)
    # The last turn's call may have been running when the process stopped: nobody
    # knows whether it took effect, and its result says so.
    last = done[-1]
    assert isinstance(last, ToolResult) and last.call_id == "d"
    assert last.status is ToolStatus.INTERRUPTED
    assert "whether it took effect is unknown" in last.content


def test_text_only_turns_are_untouched() -> None:
    history = [UserMessage("hi"), AssistantMessage([TextPart("hello")])]
    assert answer_missing(history) == history


def test_a_call_id_repeated_across_turns_is_answered_in_its_own_turn() -> None:
    first = AssistantMessage([ToolCall("call_0", "f", "{}")])
    second = AssistantMessage([ToolCall("call_0", "g", "{}")])
    done = ToolResult("call_0", "f", "ok")
    completed = answer_missing([first, done, second])
    assert completed[:3] == [first, done, second]
    assert [(m.call_id, m.name, m.status) for m in completed[3:]] == [  # type: ignore[union-attr]
        ("call_0", "g", ToolStatus.INTERRUPTED)
    ]
