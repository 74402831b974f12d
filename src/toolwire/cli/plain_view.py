"""The plain view of ``toolwire run``: one line per call result and per round, the
answer at the end (pipes, or a terminal without rich), and the formatting every view
shares."""

from __future__ import annotations

import time
from typing import Any, TextIO

from ..run.events import RoundEnd, ToolProgress, ToolResultReady
from ..wire.events import Notice
from .run_state import SHOWN_NOTICES, CallState, RunState

__all__ = ["PlainView", "latency_text", "one_line", "queued_and_ran"]


def latency_text(seconds: float | None) -> str:
    """``12 ms`` / ``1.25 s`` / ``-``."""
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def queued_and_ran(call: CallState) -> str:
    """`` (queued 3 ms, ran 1.20 s)`` when the call ran, else nothing."""
    if call.ran is None:
        return ""
    return f" (queued {latency_text(call.queued)}, ran {latency_text(call.ran)})"


def one_line(text: str, limit: int = 80) -> str:
    """``text`` on one line (each run of whitespace one space), cut to ``limit``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class PlainView:
    """One line per result and per round; the answer at the end."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.state = RunState()

    def start(self, prompt: str) -> None:
        """A prompt is about to run."""
        print(f"> {prompt}", file=self.out)

    def event(self, event: Any) -> None:
        """Handle one run event."""
        self.state.apply(event, time.monotonic())
        if isinstance(event, ToolResultReady):
            call = self.state.current.calls[event.index]
            print(
                f"  round {self.state.current.number} [{call.index}] {call.name}({one_line(call.arguments, 60)})"
                f" {call.state} {latency_text(call.latency)}{queued_and_ran(call)}",
                file=self.out,
            )
        elif isinstance(event, ToolProgress):
            call = self.state.current.calls[event.index]
            print(f"  round {event.round} [{call.index}] {call.name} progress: "
                  f"{one_line(call.progress, 60)}", file=self.out)  # fmt: skip
        elif isinstance(event, RoundEnd) and event.turn.tool_calls:
            print(f"  round {event.round}: {len(event.turn.tool_calls)} call(s)", file=self.out)
        elif isinstance(event, Notice) and event.kind in SHOWN_NOTICES:
            print(f"  notice: {event.message}", file=self.out)
        elif isinstance(event, Notice) and event.kind == "retry":
            print(f"  retry: {event.message}", file=self.out)

    def finish(self) -> None:
        """The run ended (successfully or not)."""
        if self.state.answer is not None:
            print(self.state.answer.strip() or "(empty answer)", file=self.out)
