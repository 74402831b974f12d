"""Resuming from a saved history: answer every unanswered call once, as not executed.

A run interrupted between a model turn and its results (a crash, a killed process)
leaves a history whose last calls have no result; providers reject it. Before such a
history is sent again, each unanswered call gets one ``not_executed`` result, placed
with the results of its own assistant message (where every provider expects it). The
tool is not run: after a crash nobody knows whether it ran, and running a side effect
twice is worse than telling the model it did not happen.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..history.check import unanswered_by_turn
from ..messages import AssistantMessage, Message, ToolCall, ToolResult
from ..tools import outcomes

__all__ = ["answer_missing", "not_executed_result"]

RESUME_REASON = "the run was interrupted before this call ran; call it again if still needed"


def not_executed_result(call: ToolCall, reason: str = RESUME_REASON) -> ToolResult:
    """The ``not_executed`` result for a call that was never run."""
    return outcomes.not_executed_result(call.id, call.name, reason)


def answer_missing(messages: Sequence[Message]) -> list[Message]:
    """A copy of ``messages`` where every unanswered call has a ``not_executed`` result.

    Each new result goes right after the results its assistant message already has.

    Args:
        messages: A saved history, oldest first.

    Returns:
        The completed history (the same messages when nothing was missing).

    Raises:
        HistoryError: An entry is not a toolwire message.
    """
    missing = unanswered_by_turn(messages)  # by turn: call ids may repeat across turns
    if not missing:
        return list(messages)
    out: list[Message] = []
    pending: list[ToolCall] = []
    for position, message in enumerate(messages):
        if not isinstance(message, ToolResult) and pending:
            out.extend(not_executed_result(call) for call in pending)
            pending = []
        out.append(message)
        if isinstance(message, AssistantMessage):
            pending = missing.get(position, [])
    out.extend(not_executed_result(call) for call in pending)
    return out
