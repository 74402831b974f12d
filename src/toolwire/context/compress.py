"""History compression: keep a request's history inside a token budget.

The history is read as a protected *prefix* (the system messages and the first user
message), then *units* that are never split: a user message, or an assistant message
with the tool results that answer it. When a request would exceed the budget, whole
units are dropped from the oldest on, until the history fits in
:data:`TARGET_FRACTION` of the budget; the latest unit is always kept. Dropping to
below the budget, not just to it, keeps the cut still for several rounds, so the
provider's cached prefix survives between compressions.

With ``compression="summary"`` the dropped units (and the previous summary) are
summarised by the model in one extra request, made by the agent loop through the same
``Model`` protocol; the summary enters the history sent as a user message marked
:data:`SUMMARY_MARK`, right after the prefix (never in the system prompt).

The run's own history (``RunResult.messages``) keeps everything; only what is sent is
compressed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import CallerError
from ..messages import AssistantMessage, Message, SystemMessage, ToolResult, UserMessage

__all__ = [
    "SUMMARY_MARK",
    "TARGET_FRACTION",
    "Compressor",
    "summary_prompt",
    "units",
]

TARGET_FRACTION = 0.75
SUMMARY_MARK = "[Summary of the earlier conversation, written by the model]"

_SUMMARY_SYSTEM = (
    "You compress conversations. Summarise the conversation below for the assistant "
    "who will continue it: the user's goals, decisions made, tool calls made and what "
    "their results showed (names, numbers, paths, errors), and what is still open. "
    "Be concise; plain text, no preamble."
)

Count = Callable[[Sequence[Message]], int]


def prefix_length(messages: Sequence[Message]) -> int:
    """How many leading messages are protected: system messages and the first user one."""
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            return index + 1
        if not isinstance(message, SystemMessage):
            return index
    return len(messages)


def units(messages: Sequence[Message], start: int) -> list[int]:
    """Start indices of the unsplittable units of ``messages[start:]``."""
    starts = []
    for index in range(start, len(messages)):
        if not isinstance(messages[index], ToolResult) or index == start:
            starts.append(index)
    return starts


@dataclass
class Compressor:
    """The compression state of one run (the cut moves forward only).

    Attributes:
        budget: ``max_history_tokens``.
        summarise: Whether dropped units are summarised.
        cut: Index of the first message still sent after the prefix.
        summary: The current summary text (``None``: none yet).
        summarised_upto: Messages before this index are in ``summary``.
    """

    budget: int
    summarise: bool = False
    cut: int = 0
    summary: str | None = None
    summarised_upto: int = 0

    def view(self, messages: Sequence[Message]) -> list[Message]:
        """What is sent now: the prefix, the summary, and the messages from the cut on."""
        head = prefix_length(messages)
        start = max(self.cut, head)
        out = list(messages[:head])
        if self.summary is not None:
            out.append(UserMessage(f"{SUMMARY_MARK}\n{self.summary}"))
        out.extend(messages[start:])
        return out

    def advance(self, messages: Sequence[Message], count: Count) -> bool:
        """Move the cut so that the view fits; return whether it moved.

        Raises:
            CallerError: Even the prefix and the latest unit exceed the budget.
        """
        if count(self.view(messages)) <= self.budget:
            return False
        head = prefix_length(messages)
        starts = [s for s in units(messages, head) if s >= self.cut]
        target = int(self.budget * TARGET_FRACTION)
        moved = False
        for start in starts[1:]:
            self.cut = start
            moved = True
            if count(self.view(messages)) <= target:
                break
        if count(self.view(messages)) > self.budget:
            minimum = count([*messages[:head], *messages[starts[-1] :]]) if starts else 0
            raise CallerError(
                f"ContextPolicy.max_history_tokens={self.budget} is smaller than the system "
                f"prompt, the first user message and the latest round ({minimum} tokens)",
                hint="raise max_history_tokens, or lower max_result_tokens",
            )
        return moved

    def pending(self, messages: Sequence[Message]) -> list[Message]:
        """Dropped messages not yet in the summary."""
        head = prefix_length(messages)
        return list(messages[max(self.summarised_upto, head) : max(self.cut, head)])

    def dropped(self, messages: Sequence[Message]) -> int:
        """Messages left out of the view."""
        return max(0, self.cut - prefix_length(messages))


def summary_prompt(previous: str | None, dropped: Sequence[Message]) -> list[Message]:
    """The messages of the summary request."""
    lines = []
    if previous:
        lines.append(f"Summary so far:\n{previous}\n")
    lines.append("Conversation to add to the summary:")
    for message in dropped:
        lines.append(_transcript(message))
    return [SystemMessage(_SUMMARY_SYSTEM), UserMessage("\n".join(lines))]


def _transcript(message: Message) -> str:
    if isinstance(message, ToolResult):
        return f"[tool result {message.name} ({message.status.value})]: {message.content}"
    if isinstance(message, AssistantMessage):
        calls = "".join(f"\n[call {c.name}({c.arguments})]" for c in message.tool_calls)
        return f"[assistant]: {message.text}{calls}"
    return f"[{message.role}]: {message.content}"
