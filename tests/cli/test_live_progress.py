"""Progress from long tools in what ``toolwire run`` shows: the live table, the plain
lines and the trace."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from toolwire import Agent, tool
from toolwire.cli.drive import run_prompts
from toolwire.cli.live_view import LiveView
from toolwire.cli.run_state import RunState
from toolwire.run.events import RequestStarted, ToolCallRunning, ToolProgress
from toolwire.run.model import ModelRequest
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.wire.events import ToolCallStarted


@tool
def index_files(count: int) -> Iterator[str]:
    """Indexes files, reporting each."""
    for i in range(1, count + 1):
        yield f"indexed {i}/{count}"


def _agent() -> Agent:
    model = ScriptedModel([tool_call_turn(("index_files", {"count": 3})), text_turn("done")])
    return Agent(model, [index_files])


@pytest.mark.parametrize("trace", [False, True])
def test_plain_and_trace_views_print_each_progress_line(trace: bool) -> None:
    out = io.StringIO()
    assert run_prompts(_agent(), ["index"], trace=trace, out=out) == 0
    text = out.getvalue()
    assert "indexed 1/3" in text and "indexed 2/3" in text
    # The last value is the result, shown as the result, never as progress.
    assert "progress: indexed 3/3" not in text
    if trace:  # the trace shows results too: progress first
        assert text.index("indexed 2/3") < text.index("indexed 3/3")


def test_the_live_table_shows_a_running_calls_last_progress() -> None:
    view = LiveView(io.StringIO())
    state = RunState()
    state.apply(RequestStarted(1, ModelRequest([], []), 0.0), 0.0)
    state.apply(ToolCallStarted(0, "c1", "index_files"), 0.0)
    state.apply(ToolCallRunning(0), 0.1)
    state.apply(ToolProgress("c1", {"files": 2}, 0, 1, "index_files"), 0.2)
    view.state = state
    view.console.print(view._render())
    assert '{"files": 2}' in view.console.file.getvalue()  # type: ignore[attr-defined]
