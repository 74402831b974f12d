"""The trace view of ``toolwire run`` (``--trace``, ``--demo``): every layer.

The request of each round, the streamed text and call arguments as they arrive (one
line per part, written as it streams), the assembled calls, the results and, at the
end, the history in OpenAI Chat form. With ``--events`` each wire event gets its own
line instead.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, TextIO

from ..run.events import RequestStarted, RoundEnd, ToolProgress, ToolResultReady
from ..run.progress import progress_text
from ..wire.events import (
    Finished,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)
from .plain_view import PlainView, latency_text, one_line, queued_and_ran

__all__ = ["TraceView"]


class TraceView(PlainView):
    """Every layer: requests, deltas, assembled calls, results, and the history.

    Args:
        out: Where to write.
        events: One line per wire event (each ``TextDelta``...) instead of streaming
            each part's text on one line.
    """

    def __init__(self, out: TextIO, *, events: bool = False) -> None:
        super().__init__(out)
        self.events = events
        self._part: tuple[str, int] | None = None  # the part whose line is open

    def start(self, prompt: str) -> None:
        """A prompt is about to run."""
        print(f"=== prompt: {prompt}", file=self.out)

    def event(self, event: Any) -> None:
        """Print one run event."""
        self.state.apply(event, time.monotonic())
        if not self.events and self._stream_part(event):
            return
        line = self._describe(event)
        if line:
            self._end_part()
            print(line, file=self.out)

    def _stream_part(self, event: Any) -> bool:
        """Write a delta onto its part's line as it arrives; whether it was one."""
        if isinstance(event, (TextDelta, ReasoningDelta)):
            key, label, text = ("text", 0), "text", event.text
            if isinstance(event, ReasoningDelta):
                key, label = ("reasoning", 0), "reasoning"
        elif isinstance(event, ToolCallDelta):
            call = self.state.current.calls.get(event.index)
            key, label, text = (
                ("call", event.index),
                f"call [{event.index}] {call.name if call else '?'} ",
                event.arguments,
            )
        elif isinstance(event, ToolCallStarted):
            self._end_part()
            return False
        else:
            return False
        if self._part != key:
            self._end_part()
            self.out.write(f"  {label}: " if key[0] != "call" else f"  {label}")
            self._part = key
        # Line breaks inside a part are shown escaped, so each part stays one line.
        self.out.write(text.replace("\r", "\\r").replace("\n", "\\n"))
        self.out.flush()
        return True

    def _end_part(self) -> None:
        if self._part is not None:
            self.out.write("\n")
            self._part = None

    def _describe(self, event: Any) -> str | None:  # noqa: PLR0911 — one return per event type, a dispatch read top to bottom
        if isinstance(event, RequestStarted):
            return self._request(event)
        if isinstance(event, (TextDelta, ReasoningDelta)):
            return f"  {type(event).__name__}({event.text!r})"
        if isinstance(event, ToolCallStarted):
            return f"  ToolCallStarted [{event.index}] id={event.id} name={event.name}"
        if isinstance(event, ToolCallDelta):
            return f"  ToolCallDelta [{event.index}] {event.arguments!r}"
        if isinstance(event, ToolCallReady):
            request = event.request
            parsed = (
                f"input={request.input!r}" if request.error is None else f"error={request.error}"
            )
            return f"  ToolCallReady [{event.index}] {event.call.name} {event.call.arguments}  -> {parsed}"
        if isinstance(event, ToolResultReady):
            call = self.state.current.calls.get(event.index)
            latency = latency_text(call.latency if call else None) + (
                queued_and_ran(call) if call else ""
            )
            return f"  result [{event.index}] {event.result.name} {event.result.status.value} {latency}: {one_line(event.result.content)}"
        if isinstance(event, ToolProgress):
            return (
                f"  progress [{event.index}] {event.name}: {one_line(progress_text(event.value))}"
            )
        if isinstance(event, (Finished, UsageReported, Notice)):
            return f"  {_plain(event)}"
        if isinstance(event, RoundEnd):
            calls = (
                ", ".join(f"{c.name}({c.arguments})" for c in event.turn.tool_calls)
                or "no calls: final answer"
            )
            return f"--- round {event.round} assembled: {calls}"
        return None

    def _request(self, event: RequestStarted) -> str:
        from ..history import to_openai_chat

        request = event.request
        tools = ", ".join(t.name for t in request.tools) or "none"
        lines = [
            f"--- round {event.round} request: tools [{tools}], tool_choice={request.tool_choice}"
        ]
        lines += [
            f"  {json.dumps(m, ensure_ascii=False)}" for m in to_openai_chat(request.messages)
        ]
        lines.append(f"--- round {event.round} stream")
        return "\n".join(lines)

    def history(self, messages: Sequence[Any]) -> None:
        """Print the final history in OpenAI Chat form."""
        from ..history import to_openai_chat

        self._end_part()
        print("=== history (OpenAI Chat form)", file=self.out)
        for message in to_openai_chat(messages):
            print(f"  {json.dumps(message, ensure_ascii=False)}", file=self.out)

    def finish(self) -> None:
        """Print the answer."""
        self._end_part()
        if self.state.answer is not None:
            print(f"=== answer: {self.state.answer.strip() or '(empty answer)'}", file=self.out)


def _plain(event: Any) -> str:
    fields = ", ".join(f"{name}={getattr(event, name)!r}" for name in event.__match_args__)
    return f"{type(event).__name__}({fields})"
