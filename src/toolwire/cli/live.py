"""What ``toolwire run`` shows while an agent runs.

One pure bookkeeping class, :class:`RunState`, follows ``Agent.run_stream``'s events:
rounds, each call's state (``streaming`` → ``ready`` → ``ok``/``error``/...), its
latency from the moment it was complete (when the executor may start it) to its result,
and the streamed answer text. Three views draw it:

* :class:`LiveView` — a rich table redrawn in place (a terminal with rich installed);
* :class:`PlainView` — one line per call result and per round (pipes, no rich);
* :class:`TraceView` — every layer, for ``--trace`` and ``--demo``: the request of each
  round, each delta as it arrives, the assembled calls, the results and, at the end, the
  history in OpenAI Chat form.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..errors import ToolwireError
from ..run.events import RequestStarted, RoundEnd, RunFinished, ToolResultReady
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

__all__ = [
    "CallState",
    "LiveView",
    "PlainView",
    "RoundState",
    "RunState",
    "TraceView",
    "run_prompts",
]


@dataclass
class CallState:
    """One tool call as the view knows it."""

    index: int
    name: str
    arguments: str = ""
    state: str = "streaming"
    ready_at: float | None = None
    latency: float | None = None
    output: str = ""


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
        elif isinstance(event, Finished):
            self.current.finish = event.reason
        elif isinstance(event, RunFinished):
            self.answer = event.result.output

    def _call(self, index: int) -> CallState:
        calls = self.current.calls
        if index not in calls:
            calls[index] = CallState(index, "?")
        return calls[index]

    def _on_ready(self, event: ToolCallReady, now: float) -> None:
        call = self._call(event.index)
        call.name, call.arguments = event.call.name, event.call.arguments
        call.state, call.ready_at = "ready", now

    def _on_result(self, event: ToolResultReady, now: float) -> None:
        call = self._call(event.index)
        call.state = event.result.status.value
        call.output = event.result.content
        call.latency = now - call.ready_at if call.ready_at is not None else None


def latency_text(seconds: float | None) -> str:
    """``12 ms`` / ``1.25 s`` / ``-``."""
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- views ---------------------------------------------------------------------------


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
                f"  round {self.state.current.number} [{call.index}] {call.name}({_one_line(call.arguments, 60)})"
                f" {call.state} {latency_text(call.latency)}",
                file=self.out,
            )
        elif isinstance(event, RoundEnd) and event.turn.tool_calls:
            print(f"  round {event.round}: {len(event.turn.tool_calls)} call(s)", file=self.out)

    def finish(self) -> None:
        """The run ended (successfully or not)."""
        if self.state.answer is not None:
            print(self.state.answer.strip() or "(empty answer)", file=self.out)


class TraceView(PlainView):
    """Every layer: requests, deltas, assembled calls, results, and the history."""

    def start(self, prompt: str) -> None:
        """A prompt is about to run."""
        print(f"=== prompt: {prompt}", file=self.out)

    def event(self, event: Any) -> None:
        """Print one run event."""
        self.state.apply(event, time.monotonic())
        line = self._describe(event)
        if line:
            print(line, file=self.out)

    def _describe(self, event: Any) -> str | None:
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
            latency = latency_text(call.latency if call else None)
            return f"  result [{event.index}] {event.result.name} {event.result.status.value} {latency}: {_one_line(event.result.content)}"
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
        tools = ", ".join(t["function"]["name"] for t in request.tools) or "none"
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

        print("=== history (OpenAI Chat form)", file=self.out)
        for message in to_openai_chat(messages):
            print(f"  {json.dumps(message, ensure_ascii=False)}", file=self.out)

    def finish(self) -> None:
        """Print the answer."""
        if self.state.answer is not None:
            print(f"=== answer: {self.state.answer.strip() or '(empty answer)'}", file=self.out)


def _plain(event: Any) -> str:
    fields = ", ".join(f"{name}={getattr(event, name)!r}" for name in event.__match_args__)
    return f"{type(event).__name__}({fields})"


class LiveView(PlainView):
    """A rich table of rounds and calls, redrawn as events arrive."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=out)
        self.live = Live(console=self.console, refresh_per_second=12, transient=False)

    def start(self, prompt: str) -> None:
        """Start the live display."""
        self.console.print(f"[bold]>[/bold] {prompt}")
        self.state = RunState()
        self.live.start()

    def event(self, event: Any) -> None:
        """Update the table."""
        self.state.apply(event, time.monotonic())
        self.live.update(self._render())

    def _render(self) -> Any:
        from rich.table import Table

        table = Table(expand=False)
        for column in ("round", "#", "tool", "arguments", "state", "latency"):
            table.add_column(column)
        for round_ in self.state.rounds:
            for call in round_.calls.values():
                table.add_row(
                    str(round_.number),
                    str(call.index),
                    call.name,
                    _one_line(call.arguments, 50),
                    _styled(call.state),
                    latency_text(call.latency),
                )
        text = self.state.current.text if self.state.rounds else ""
        if text.strip():
            table.caption = _one_line(text, 120)
        return table

    def finish(self) -> None:
        """Stop the display and print the answer."""
        self.live.stop()
        if self.state.answer is not None:
            self.console.print(
                f"[bold]answer:[/bold] {self.state.answer.strip() or '(empty answer)'}"
            )


def _styled(state: str) -> str:
    colour = {"ok": "green", "ready": "cyan", "streaming": "yellow"}.get(state, "red")
    return f"[{colour}]{state}[/{colour}]"


# -- driving -------------------------------------------------------------------------


def make_view(trace: bool, out: TextIO | None = None) -> PlainView:
    """The view for this output: trace, live (terminal + rich), or plain."""
    stream = out or sys.stdout
    if trace:
        return TraceView(stream)
    if stream.isatty():
        try:
            return LiveView(stream)
        except ImportError:
            pass
    return PlainView(stream)


def run_prompts(
    agent: Any, prompts: Sequence[str], *, trace: bool, out: TextIO | None = None
) -> int:
    """Run each prompt on ``agent`` in turn, drawing it; returns the exit status.

    With several prompts (``--demo``) a failed run is reported on one line and the next
    prompt still runs; the status is then 2. A single prompt's error propagates, for the
    CLI's one-line error handling.
    """
    status = 0
    for prompt in prompts:
        view = make_view(trace, out)
        try:
            asyncio.run(_run_one(agent, prompt, view))
        except ToolwireError as exc:
            if len(prompts) == 1:
                raise
            print(f"toolwire: error: {exc}", file=sys.stderr)
            status = 2
    return status


async def _run_one(agent: Any, prompt: str, view: PlainView) -> None:
    view.start(prompt)
    stream = agent.run_stream(prompt)
    try:
        async with stream:
            async for event in stream:
                view.event(event)
    except ToolwireError:
        if isinstance(view, TraceView):
            view.history(stream.messages)
        raise
    finally:
        view.finish()
    if isinstance(view, TraceView):
        view.history(stream.messages)
    out = getattr(view, "out", None) or sys.stdout
    report_failures(stream.result.diagnostics, out)
    if isinstance(view, TraceView):
        report_tokens(stream.result.context, out)


def report_tokens(context: Any, out: TextIO) -> None:
    """After a run: each request's tokens by part, and what the provider reported."""
    if context is None or not context.requests:
        return
    rows = context.report()
    kind = "exact" if all(r["exact"] for r in rows) else "estimated"
    print(f"=== tokens per request ({kind}; input and cached as the provider reported)", file=out)
    print("| round | tools | calls | results | other | total | input | cached |", file=out)
    print("|---:|---:|---:|---:|---:|---:|---:|---:|", file=out)
    for r in rows:
        label = "summary" if r["summary"] else r["round"]
        print(
            f"| {label} | {r['tools']} | {r['calls']} | {r['results']} | {r['other']} "
            f"| {r['total']} | {r['input_tokens']} | {r['cache_read_tokens']} |",
            file=out,
        )


def report_failures(diagnostics: Any, out: TextIO) -> None:
    """After a run: the failure classes seen (wrong tool, bad JSON, loops, ...), if any."""
    if diagnostics.total:
        print("=== failures in this run (toolwire.RunDiagnostics)", file=out)
        print(diagnostics.summary(), file=out)
