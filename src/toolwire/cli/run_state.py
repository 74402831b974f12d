"""What ``toolwire run``'s views know of a run: :class:`RunState`, updated event by event.

Pure bookkeeping, no output: rounds, each call's state (``streaming`` → ``ready`` →
``ok``/``error``/...), its latency from the moment it was complete (when the executor
may start it) to its result, split into queued and ran, the streamed answer text, the
notices every view prints, and the answer as the views label it (a refusal, a pause, a
turn cut at the token limit, text shaped like a call).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..run.events import (
    RequestStarted,
    RoundEnd,
    RunFinished,
    ToolCallRunning,
    ToolProgress,
    ToolResultReady,
)
from ..run.progress import progress_text
from ..wire.events import (
    Finished,
    Notice,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
)

__all__ = [
    "CALL_SHAPED_LABEL",
    "SHOWN_NOTICES",
    "TRUNCATED_LABEL",
    "CallState",
    "RoundState",
    "RunState",
]

SHOWN_NOTICES = frozenset({"tool_choice_ignored", "call_shaped_text", "repetition_stopped"})
"""The notice kinds every view prints (the trace prints every notice)."""


@dataclass
class CallState:
    """One tool call as the view knows it."""

    index: int
    name: str
    arguments: str = ""
    state: str = "streaming"
    ready_at: float | None = None
    running_at: float | None = None  # its tool began (ToolCallRunning)
    latency: float | None = None
    queued: float | None = None  # ready → running: batch, approval, a worker thread
    ran: float | None = None  # running → result
    output: str = ""
    progress: str = ""  # the last progress the tool reported (ToolProgress), as text


@dataclass
class RoundState:
    """One round: its calls by index and its streamed text."""

    number: int
    calls: dict[int, CallState] = field(default_factory=dict)
    text: str = ""
    finish: str | None = None


@dataclass
class RunState:
    """Everything the views draw, updated event by event."""

    rounds: list[RoundState] = field(default_factory=list)
    answer: str | None = None
    notices: list[str] = field(default_factory=list)
    waiting_since: float | None = None  # a request is out and nothing has come back yet
    retry: str | None = None  # the provider's last retry while waiting (why, and how long)
    call_shaped: bool = False  # the latest turn's text looks like a call nothing read

    @property
    def current(self) -> RoundState:
        """The round in progress (a round 0 before the first request)."""
        if not self.rounds:
            self.rounds.append(RoundState(0))
        return self.rounds[-1]

    def apply(self, event: Any, now: float) -> None:
        """Update from one run event observed at time ``now`` (seconds)."""
        if isinstance(event, RequestStarted):
            self.rounds.append(RoundState(event.round))
            self.waiting_since, self.retry, self.call_shaped = now, None, False
        elif isinstance(event, TextDelta):
            self.current.text += event.text
        elif isinstance(event, ToolCallStarted):
            self.current.calls[event.index] = CallState(event.index, event.name or "?")
        elif isinstance(event, ToolCallDelta):
            self._call(event.index).arguments += event.arguments
        elif isinstance(event, ToolCallReady):
            self._on_ready(event, now)
        elif isinstance(event, ToolResultReady):
            self._on_result(event, now)
        elif isinstance(event, (ToolCallRunning, ToolProgress)):
            self._on_running(event, now)
        elif isinstance(event, Finished):
            self.current.finish = event.reason
        elif isinstance(event, RunFinished):
            self.answer = _answer(event.result, call_shaped=self.call_shaped)
        elif isinstance(event, Notice) and event.kind in SHOWN_NOTICES:
            self.notices.append(event.message)
            self.call_shaped = self.call_shaped or event.kind == "call_shaped_text"
        elif isinstance(event, Notice) and event.kind == "retry":
            self.retry = event.message
        if isinstance(
            event, (TextDelta, ReasoningDelta, RefusalDelta, ToolCallStarted, Finished, RoundEnd)
        ):
            self.waiting_since, self.retry = None, None  # the model answered

    def _call(self, index: int) -> CallState:
        calls = self.current.calls
        if index not in calls:
            calls[index] = CallState(index, "?")
        return calls[index]

    def _on_running(self, event: ToolCallRunning | ToolProgress, now: float) -> None:
        call = self._call(event.index)
        if isinstance(event, ToolProgress):
            call.progress = progress_text(event.value)
        else:
            call.state, call.running_at = "running", now

    def _on_ready(self, event: ToolCallReady, now: float) -> None:
        call = self._call(event.index)
        call.name, call.arguments = event.call.name, event.call.arguments
        call.state, call.ready_at = "ready", now

    def _on_result(self, event: ToolResultReady, now: float) -> None:
        call = self._call(event.index)
        call.state = event.result.status.value
        call.output = event.result.content
        call.latency = now - call.ready_at if call.ready_at is not None else None
        if call.running_at is not None:
            call.ran = now - call.running_at
            if call.ready_at is not None:
                call.queued = call.running_at - call.ready_at


def _answer(result: Any, *, call_shaped: bool = False) -> str:
    """What a finished run says: its answer; a refusal, a pause, a turn cut at the token
    limit and call-shaped text (``call_shaped_text``) shown as what they are."""
    if result.paused:  # nothing answered yet: what waits, and how to go on
        waiting = ", ".join(f"{p.tool} ({p.call_id})" for p in result.pending)
        return f"(paused) waiting for approval of {waiting}: toolwire resume {result.run_id[:8]}"
    if result.refused:
        return f"(refused) {result.refusal}"
    labels = []
    if result.truncated:
        labels.append(TRUNCATED_LABEL)
    if call_shaped:
        labels.append(CALL_SHAPED_LABEL)
    return "".join(f"({label}) " for label in labels) + str(result.output)


TRUNCATED_LABEL = (
    "outcome length: the model's turn was cut at the token limit, so this is what it "
    "wrote before the cut; raise --max-tokens"
)
"""How an answer of a run whose outcome is ``length`` begins."""

CALL_SHAPED_LABEL = "not an answer: the model wrote a tool call as text, and no tool ran"
"""How an answer whose text looks like an unread call begins (``call_shaped_text``)."""
