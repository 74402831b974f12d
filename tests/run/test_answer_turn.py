"""A turn without calls (every run's answer) and a turn's first call.

A :class:`~toolwire.run.execute.TurnRun` makes what running calls takes (its runner,
task scope, early starts and positions) at the turn's first call: a turn without
calls makes none of it, and is bound, finished and read as any other turn.
"""

from __future__ import annotations

import asyncio

import pytest

from toolwire import ToolContext
from toolwire.errors import CallerError
from toolwire.messages import ToolCall, ToolStatus
from toolwire.run.execute import Executor, TurnRun
from toolwire.run.progress import ToolScope
from toolwire.tools import tool
from toolwire.turn import ToolRequest
from toolwire.wire.events import ToolCallReady, ToolCallStarted

from .helpers import request, run

MADE_AT_THE_FIRST_CALL = {"_runner", "_scope", "_early", "_positions"}


@tool(concurrency_safe=True, side_effects=False)
async def look(key: str) -> str:
    """Look a key up."""
    await asyncio.sleep(0)
    return f"seen {key}"


@tool(side_effects=False)
async def where(key: str, context: ToolContext) -> str:
    """Say which run asked."""
    return f"{context.run_id} asked for {key}"


def ready(req: ToolRequest) -> ToolCallReady:
    return ToolCallReady(req.index, ToolCall(req.id, req.name, req.raw_arguments), req)


def test_a_turn_without_calls_makes_nothing_to_run_calls_with() -> None:
    async def answer() -> TurnRun:
        turn = Executor([look]).turn(early=True, allowed=3)
        async with turn:
            turn.bind([])
            await turn.finish()
        return turn

    turn = run(answer())
    assert turn.bound
    assert turn.results() == []
    assert turn.validations() == []
    assert turn.answered_requests() == []
    assert turn.held == []
    assert turn.executed == 0
    assert turn.discarded == []
    assert turn.skipped_for_limit == 0
    assert not MADE_AT_THE_FIRST_CALL & vars(turn).keys()


def test_a_turn_without_calls_that_fails_passes_its_error_on_unbound() -> None:
    async def failing() -> TurnRun:
        turn = Executor([look]).turn()
        with pytest.raises(RuntimeError, match="stream broke"):
            async with turn:
                raise RuntimeError("stream broke")
        return turn

    turn = run(failing())
    assert not turn.bound
    assert turn.discarded == []
    assert not MADE_AT_THE_FIRST_CALL & vars(turn).keys()
    with pytest.raises(CallerError, match="bind"):
        turn.results()


def test_a_resumed_turn_with_nothing_left_to_run_binds_its_empty_positions() -> None:
    async def resumed() -> TurnRun:
        turn = Executor([look]).turn(early=False)
        async with turn:
            turn.bind([], positions=[])
            await turn.finish()
        return turn

    assert run(resumed()).results() == []


def test_calls_that_streamed_no_events_still_run_from_the_final_turn() -> None:
    reqs = [request("look", {"key": "a"}, index=0), request("look", {"key": "b"}, index=1)]

    async def whole() -> TurnRun:
        turn = Executor([look]).turn(early=True)
        async with turn:
            await turn.finish(reqs)
        return turn

    turn = run(whole())
    assert [r.content for r in turn.results()] == ["seen a", "seen b"]
    assert turn.executed == 2


def test_the_start_callback_and_scope_given_before_the_first_call_reach_it() -> None:
    req = request("where", {"key": "k"}, index=0)
    told: list[int] = []

    async def streamed() -> TurnRun:
        turn = Executor([where]).turn(early=True)
        turn.on_start = told.append  # set before the turn made its runner
        turn.scope = ToolScope("run-7", 2)
        assert turn.on_start == told.append
        assert turn.scope == ToolScope("run-7", 2)
        async with turn:
            turn.started(ToolCallStarted(0, req.id, req.name))
            turn.ready(ready(req))
            await turn.finish([req])
        return turn

    turn = run(streamed())
    [result] = turn.results()
    assert result.status is ToolStatus.OK
    assert result.content == "run-7 asked for k"
    assert told == [0]


def test_the_start_callback_set_after_the_first_call_reaches_the_next() -> None:
    reqs = [request("look", {"key": "a"}, index=0), request("look", {"key": "b"}, index=1)]
    told: list[int] = []

    async def streamed() -> None:
        turn = Executor([look]).turn(early=False)
        async with turn:
            turn.ready(ready(reqs[0]))  # early starts off: nothing runs yet
            turn.on_start = told.append
            await turn.finish(reqs)

    run(streamed())
    assert sorted(told) == [0, 1]
