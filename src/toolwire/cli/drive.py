"""Driving ``toolwire run``: each prompt's run streamed into the view that fits the
output (:func:`make_view`: the trace, the live table, or plain lines), and what is
reported after a run (failures by class, tokens per request).

The views follow one :class:`~toolwire.cli.run_state.RunState`:

* :class:`~toolwire.cli.live_view.LiveView` — a rich table redrawn in place (a terminal
  with rich installed);
* :class:`~toolwire.cli.plain_view.PlainView` — one line per call result and per round
  (pipes, no rich);
* :class:`~toolwire.cli.trace_view.TraceView` — every layer, for ``--trace`` and
  ``--demo``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ..errors import ToolwireError
from .live_view import LiveView
from .plain_view import PlainView
from .terminal import EscapingWriter
from .trace_view import TraceView

__all__ = ["make_view", "report_failures", "report_tokens", "run_prompts"]


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
