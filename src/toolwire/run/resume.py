"""Continuing a saved history: answer every unanswered call once, without running it.

A run interrupted between a model turn and its results (a crash, a killed process)
leaves a history whose last calls have no result; providers reject it. Before such a
history is sent again, each unanswered call gets one result, placed with the results
of its own assistant message (where every provider expects it). The tool is not run.
A call of the *last* assistant turn may have been running when the process stopped,
so it is ``interrupted`` (whether it took effect is unknown: the model is told so);
an unanswered call of an earlier turn is ``not_executed`` (the run went on past it,
so it never ran). A run resumed from the audit log knows more
(:mod:`toolwire.run.resuming`): there, calls with no start row did not start.
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
    """A copy of ``messages`` where every unanswered call has a result.

    Each new result goes right after the results its assistant message already has:
    ``interrupted`` for a call of the last assistant message, ``not_executed`` for an
    earlier one.

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
    last = max(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage))
    out: list[Message] = []
    owner, pending = -1, list[ToolCall]()
    for position, message in enumerate(messages):
        if not isinstance(message, ToolResult) and pending:
            out.extend(_unanswered(pending, last=owner == last))
            pending = []
        out.append(message)
        if isinstance(message, AssistantMessage):
            owner, pending = position, missing.get(position, [])
    out.extend(_unanswered(pending, last=owner == last))
    return out


def _unanswered(calls: list[ToolCall], *, last: bool) -> list[ToolResult]:
    if last:
        return [outcomes.interrupted_result(call.id, call.name) for call in calls]
    return [not_executed_result(call) for call in calls]
