"""History compression as a property: every view is well formed and keeps what it must."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import CallerError, check_history
from toolwire.context.compress import Compressor, prefix_length
from toolwire.context.tokens import account
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)

Round = tuple[str, list[int]]  # assistant text, result sizes (no results: a plain reply)


def history(rounds: list[Round], interjections: list[bool]) -> list[Message]:
    messages: list[Message] = [SystemMessage("system prompt"), UserMessage("the first request")]
    for number, ((text, sizes), interject) in enumerate(zip(rounds, interjections, strict=False)):
        calls = [ToolCall(f"c{number}_{i}", "tool", "{}") for i in range(len(sizes))]
        messages.append(AssistantMessage([TextPart(text), *calls]))
        messages += [
            ToolResult(c.id, "tool", "word " * size) for c, size in zip(calls, sizes, strict=True)
        ]
        if interject:
            messages.append(UserMessage("and another thing"))
    return messages


def count(messages: Any) -> int:
    return account(messages).total


rounds_strategy = st.lists(
    st.tuples(st.text(max_size=30), st.lists(st.integers(0, 300), max_size=3)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(rounds_strategy, st.lists(st.booleans(), max_size=25), st.integers(50, 3000))
def test_every_view_is_well_formed_and_within_budget(
    rounds: list[Round], interjections: list[bool], budget: int
) -> None:
    messages = history(rounds, interjections + [False] * len(rounds))
    compressor = Compressor(budget)
    # grow the history one message at a time, as a run does
    for end in range(2, len(messages) + 1):
        current = messages[:end]
        if isinstance(current[-1], AssistantMessage) and current[-1].tool_calls:
            continue  # a request is never made between a call and its results
        if any(isinstance(m, ToolResult) for m in messages[end : end + 1]):
            continue
        try:
            compressor.advance(current, count)
        except CallerError as exc:
            assert "max_history_tokens" in str(exc)
            return
        view = compressor.view(current)
        check_history(view)
        assert view[: prefix_length(current)] == current[: prefix_length(current)]
        assert view[-1] is current[-1]
        assert count(view) <= budget


def test_the_latest_round_alone_over_budget_is_a_caller_error() -> None:
    messages = history([("look", [2000])], [False])
    with pytest.raises(CallerError, match="max_history_tokens=100"):
        Compressor(100).advance(messages, count)
