"""What observers get from a run: times, rounds, early starts, repairs, attempts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, CallerError, tool
from toolwire.run import ExecutionOptions
from toolwire.run.events import (
    CallDiscarded,
    ObservedEvent,
    RequestStarted,
    ResponseDone,
    RunEnded,
    RunStarted,
    ToolResultReady,
)
from toolwire.run.observers import RunHook, RunListener
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .helpers import CorrectingModel, search


class Recorder:
    """A RunHook keeping every event it is given."""

    def __init__(self) -> None:
        self.events: list[ObservedEvent] = []

    def begin(self, start: RunStarted) -> RunListener:
        self.events.append(start)
        return self.events.append


flaky_calls = {"n": 0}


@tool(idempotent=True, retries=2)
def flaky(x: int) -> str:
    """Fails the first time."""
    flaky_calls["n"] += 1
    if flaky_calls["n"] == 1:
        raise RuntimeError("first try fails")
    return f"ok {x}"


def test_events_carry_times_rounds_and_how_calls_ran() -> None:
    hook = Recorder()
    assert isinstance(hook, RunHook)
    model = ScriptedModel(
        [
            tool_call_turn(("search", {"q": "a"}), ("search", '{"q": "b",}'), fragment=2),
            tool_call_turn(("flaky", {"x": 1})),
            text_turn("done"),
        ],
        chunk_delay=0.001,
    )
    options = ExecutionOptions(backoff_base=0.0)
    result = Agent(model, [search, flaky], log=hook, execution=options).run_sync("go")
    events = hook.events
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunEnded)
    start, end = events[0], events[-1]
    assert start.run_id == end.run_id == result.run_id and start.model == "scripted"
    assert end.outcome == "ok" and end.result is result and end.rounds == 2

    sent = [e for e in events if isinstance(e, RequestStarted)]
    done = [e for e in events if isinstance(e, ResponseDone)]
    assert [e.round for e in sent] == [e.round for e in done] == [1, 2, 3]
    for request, response in zip(sent, done, strict=True):
        assert request.at == response.started_at <= response.ended_at
        assert response.first_event_at is not None and response.latency_ms >= 0

    results = [e for e in events if isinstance(e, ToolResultReady)]
    assert [(e.round, e.result.name) for e in results] == [
        (1, "search"),
        (1, "search"),
        (2, "flaky"),
    ]
    first, repaired, retried = (e.call for e in results)
    assert first is not None and repaired is not None and retried is not None
    assert first.early and first.arguments == '{"q": "a"}' and not first.repaired
    assert repaired.repaired and repaired.arguments == '{"q": "b",}'
    assert retried.attempts == 2 and not retried.early
    for call in (first, repaired, retried):
        assert call.started_at is not None and call.started_at <= call.ended_at
        assert call.latency_ms is not None and call.latency_ms >= 0
    # Calls started early begin before their turn's stream ended.
    assert first.started_at < done[0].ended_at


def test_discarded_call_event_has_its_round_and_record() -> None:
    hook = Recorder()
    Agent(CorrectingModel(), [search], log=hook).run_sync("go")
    [discarded] = [e for e in hook.events if isinstance(e, CallDiscarded)]
    assert discarded.round == 1 and discarded.call is not None and discarded.call.early
    assert discarded.call.arguments == '{"q": "draft"}'


def test_observers_see_a_failed_run_end() -> None:
    hook = Recorder()
    with pytest.raises(CallerError):
        Agent(ScriptedModel([]), [], log=hook).run_sync("go")
    end = hook.events[-1]
    assert isinstance(end, RunEnded) and end.outcome == "error"
    assert isinstance(end.error, CallerError) and end.result is None


def test_log_and_instrument_arguments_are_checked(tmp_path: Path) -> None:
    model = ScriptedModel([])
    with pytest.raises(CallerError, match="neither an AuditLog nor a path"):
        Agent(model, [], log=42)  # type: ignore[arg-type]
    with pytest.raises(CallerError, match="instrument must be a bool"):
        Agent(model, [], instrument="yes")  # type: ignore[arg-type]
    agent: Any = Agent(model, [], log=tmp_path / "runs.db")
    assert type(agent.hooks[0]).__name__ == "AuditLog"


def test_a_rewritten_history_is_recorded_whole() -> None:
    import json
    import time

    from toolwire import AuditLog
    from toolwire.messages import AssistantMessage, SystemMessage, TextPart, UserMessage
    from toolwire.run.events import RunStarted
    from toolwire.run.model import ModelRequest
    from toolwire.turn import Turn

    log = AuditLog(":memory:")
    first = [SystemMessage("s"), UserMessage("q1")]
    listener = log.begin(RunStarted("ab" * 16, "m", [], {}, first, time.time()))
    answer = Turn(AssistantMessage([TextPart("a")]), [], "stop")
    grown = [*first, answer.message, UserMessage("q2")]
    compacted = [SystemMessage("s"), UserMessage("summary"), UserMessage("q3")]
    for number, messages in enumerate((first, grown, compacted), start=1):
        now = time.time()
        listener(RequestStarted(number, ModelRequest(messages), now))
        listener(ResponseDone(number, answer, now, None, now))
    with log.reading() as conn:
        rows = conn.execute("SELECT messages, history_length FROM requests ORDER BY seq").fetchall()
    contents = [[m.get("content") for m in json.loads(text)] for text, _ in rows]
    assert contents == [["s", "q1"], [None, "q2"], ["s", "summary", "q3"]]
    assert [length for _, length in rows] == [2, 4, 3]
    log.close()
