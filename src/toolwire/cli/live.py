"""What ``toolwire run`` shows while an agent runs.

One pure bookkeeping class, :class:`RunState`, follows ``Agent.run_stream``'s events:
rounds, each call's state (``streaming`` → ``ready`` → ``ok``/``error``/...), its
latency from the moment it was complete (when the executor may start it) to its result,
and the streamed answer text. Three views draw it:

* :class:`LiveView` — a rich table redrawn in place (a terminal with rich installed);
* :class:`PlainView` — one line per call result and per round (pipes, no rich);
* :class:`TraceView` — every layer, for ``--trace`` and ``--demo``: the request of each
  round, the streamed text and call arguments as they arrive (one line per part, written
  as it streams), the assembled calls, the results and, at the end, the history in
  OpenAI Chat form. With ``--events`` each wire event gets its own line instead.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..errors import ToolwireError
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
    UsageReported,
)
from . import screen
from .terminal import EscapingWriter, printable

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


def latency_text(seconds: float | None) -> str:
    """``12 ms`` / ``1.25 s`` / ``-``."""
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _split(call: CallState) -> str:
    """`` (queued 3 ms, ran 1.20 s)`` when the call ran, else nothing."""
    if call.ran is None:
        return ""
    return f" (queued {latency_text(call.queued)}, ran {latency_text(call.ran)})"


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


SHOWN_NOTICES = frozenset({"tool_choice_ignored", "call_shaped_text", "repetition_stopped"})
"""The notice kinds every view prints (the trace prints every notice)."""


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
                f" {call.state} {latency_text(call.latency)}{_split(call)}",
                file=self.out,
            )
        elif isinstance(event, ToolProgress):
            call = self.state.current.calls[event.index]
            print(f"  round {event.round} [{call.index}] {call.name} progress: "
                  f"{_one_line(call.progress, 60)}", file=self.out)  # fmt: skip
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
            latency = latency_text(call.latency if call else None) + (_split(call) if call else "")
            return f"  result [{event.index}] {event.result.name} {event.result.status.value} {latency}: {_one_line(event.result.content)}"
        if isinstance(event, ToolProgress):
            return (
                f"  progress [{event.index}] {event.name}: {_one_line(progress_text(event.value))}"
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


class LiveView(PlainView):
    """A rich table of rounds and calls, redrawn as events arrive.

    Only the view's own labels are rich markup: every value from the run (the prompt,
    the model's text and answer, tool names, arguments, notices) goes through
    :func:`_literal`, so ``[/INST]`` is shown, not parsed (it once ended the run with a
    ``MarkupError``), and ``[link=...]`` from a model is never a link.
    """

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        from rich.console import Console

        self.console = Console(file=out)
        self.live = self._new_live()
        self._lock = threading.Lock()  # the approver pauses the display from its thread
        self._drawing = False  # between start() and finish()
        self._release: Callable[[], None] | None = None

    def _new_live(self) -> Any:
        """A fresh display (one that was stopped keeps the old table's height, and would
        erase that many lines above it when started again). Transient: stopping it
        clears the table; :meth:`finish` prints the last one for good."""
        from rich.live import Live

        return Live(self, console=self.console, refresh_per_second=12, transient=True)

    def start(self, prompt: str) -> None:
        """Start the live display."""
        self.console.print(f"[bold]>[/bold] {_literal(prompt)}")
        self.state = RunState()
        with self._lock:
            self._drawing = True
            self.live.start()
        self._release = screen.hold(self.paused)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The table cleared while a question is asked and answered (``screen.question``),
        then drawn again below the answer — unless the run finished meanwhile."""
        with self._lock:
            self.live.stop()
        try:
            yield
        finally:
            with self._lock:
                if self._drawing:
                    self.live = self._new_live()
                    self.live.start(refresh=True)

    def event(self, event: Any) -> None:
        """Update the table; a provider's retry is also printed above it, to stay."""
        self.state.apply(event, time.monotonic())
        if isinstance(event, Notice) and event.kind == "retry":
            self.live.console.print(
                f"retry: {printable(event.message)}", markup=False, highlight=False
            )

    def __rich__(self) -> Any:
        """Redrawn on every refresh, so the wait for a silent model counts up live."""
        return self._render()

    def _render(self) -> Any:
        from rich.table import Table

        table = Table(expand=False)
        for column in ("round", "#", "tool", "arguments", "state", "queued", "ran"):
            table.add_column(column)
        for round_ in self.state.rounds:
            for call in round_.calls.values():
                table.add_row(
                    str(round_.number),
                    str(call.index),
                    _literal(call.name),
                    _literal(_one_line(call.arguments, 50)),
                    _styled(call.state) + _progress(call),
                    latency_text(call.queued),
                    latency_text(call.ran),
                )
        text = self.state.current.text if self.state.rounds else ""
        if text.strip():
            table.caption = _literal(_one_line(text, 120))
        waited = self.state.waiting_since
        if waited is not None:
            table.caption = f"waiting for the model: {time.monotonic() - waited:.0f} s"
            if self.state.retry is not None:
                table.caption += f" · {_literal(self.state.retry)}"
        return table

    def finish(self) -> None:
        """Stop the display, print the last table and the answer."""
        if self._release is not None:
            self._release()
            self._release = None
        with self._lock:
            self._drawing = False
            self.live.stop()
        self.console.print(self._render())
        for notice in self.state.notices:
            self.console.print(f"[yellow]notice:[/yellow] {_literal(notice)}", markup=True)
        if self.state.answer is not None:
            answer = self.state.answer.strip() or "(empty answer)"
            self.console.print(f"[bold]answer:[/bold] {_literal(answer)}")


def _literal(text: str) -> str:
    """A value from the run as rich markup that shows it as it is (controls escaped)."""
    from rich.markup import escape

    return escape(printable(text))


def _progress(call: CallState) -> str:
    """A running call's last progress, after its state."""
    if call.state != "running" or not call.progress:
        return ""
    return f" {_literal(_one_line(call.progress, 40))}"


def _styled(state: str) -> str:
    colour = {"ok": "green", "ready": "cyan", "running": "blue", "streaming": "yellow"}.get(
        state, "red"
    )
    return f"[{colour}]{state}[/{colour}]"


# -- driving -------------------------------------------------------------------------


def make_view(trace: bool, out: TextIO | None = None, *, events: bool = False) -> PlainView:
    """The view for this output: trace, live (terminal + rich), or plain."""
    stream = out or sys.stdout
    if trace or events:
        # What the run prints is shown, never obeyed: control characters escaped.
        return TraceView(EscapingWriter(stream), events=events)  # type: ignore[arg-type]
    if stream.isatty():
        try:
            return LiveView(stream)
        except ImportError:
            pass
    return PlainView(EscapingWriter(stream))  # type: ignore[arg-type]


def run_prompts(
    agent: Any,
    prompts: Sequence[str],
    *,
    trace: bool,
    out: TextIO | None = None,
    events: bool = False,
    cases: Sequence[Any] = (),
) -> int:
    """Run each prompt on ``agent`` in turn, drawing it; returns the exit status.

    With several prompts (``--demo``) a failed run is reported on one line and the next
    prompt still runs; the status is then 2. A single prompt's error propagates, for the
    CLI's one-line error handling. ``cases`` (``toolwire.demo.verdict.DemoCase``, by
    prompt) say what a right answer is: it is printed before the run, and the whole
    run's verdict after it, whether the run succeeded or not.
    """
    status = 0
    by_prompt = {case.prompt: case for case in cases}
    for prompt in prompts:
        view = make_view(trace, out, events=events)
        try:
            asyncio.run(_run_one(agent, prompt, view, by_prompt.get(prompt)))
        except ToolwireError as exc:
            if len(prompts) == 1:
                raise
            print(f"toolwire: error: {exc}", file=sys.stderr)
            status = 2
    return status


def _print_verdict(case: Any, messages: Sequence[Any], tools: Sequence[str], out: TextIO) -> None:
    from ..demo.verdict import judge_run

    print(f"=== {judge_run(case, messages, tools).line}", file=out)


async def _run_one(agent: Any, prompt: str, view: PlainView, case: Any = None) -> None:
    view.start(prompt)
    out = getattr(view, "out", None) or sys.stdout
    if case is not None:
        print(f"=== a right answer: {case.expected}", file=out)
    stream = agent.run_stream(prompt)
    try:
        await _drive(stream, view)
    finally:
        if case is not None:
            _print_verdict(case, stream.messages, agent.toolset.names, out)
    report_failures(stream.result.diagnostics, out)
    if isinstance(view, TraceView):
        report_tokens(stream.result.context, out)


async def _drive(stream: Any, view: PlainView) -> None:
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
