"""The driver's half of runs on Ray, without Ray: events reach the hooks in order, once.

The relay actor can deliver a run's posts in any order; :class:`DriverSide` restores the
order the run emitted them in. These tests feed it the messages a worker would send.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.errors import MaxRoundsExceededError, ToolExecutionError
from toolwire.integrations.ray_relay import DriverSide
from toolwire.messages import Usage
from toolwire.run.events import ObservedEvent, RunEnded, RunStarted, ToolCallRunning
from toolwire.run.observers import RunListener


class Recorder:
    """A run hook that keeps what it heard, per run id."""

    def __init__(self, refuse: bool = False) -> None:
        self.heard: dict[str, list[Any]] = {}
        self.refuse = refuse

    def begin(self, start: RunStarted) -> RunListener:
        if self.refuse:
            raise OSError("the log's disk is full")
        heard = self.heard.setdefault(start.run_id, [start])

        def listen(event: ObservedEvent) -> None:
            heard.append(event)

        return listen


def started(run_id: str) -> RunStarted:
    return RunStarted(run_id, "m", [], {}, [], time.time())


def ended(run_id: str) -> RunEnded:
    return RunEnded(run_id, "ok", time.time(), None, None, 1, 1, Usage())


def run_messages(index: int, run_id: str, calls: int) -> list[tuple[Any, ...]]:
    events = [started(run_id), *(ToolCallRunning(i) for i in range(calls)), ended(run_id)]
    return [("event", index, n, event, None) for n, event in enumerate(events)]


@given(st.permutations(run_messages(0, "r0", 5) + run_messages(1, "r1", 3)), st.integers(1, 4))
def test_events_reach_the_hooks_in_run_order_whatever_order_they_arrive_in(
    messages: list[tuple[Any, ...]], batch: int
) -> None:
    hook = Recorder()
    driver = DriverSide((hook,), None, relay=None)
    for start in range(0, len(messages), batch):
        assert driver.feed(messages[start : start + batch]) == []
    assert [type(e).__name__ for e in hook.heard["r0"]] == (
        ["RunStarted"] + ["ToolCallRunning"] * 5 + ["RunEnded"]
    )
    assert [e.index for e in hook.heard["r0"][1:-1]] == [0, 1, 2, 3, 4]
    assert [e.index for e in hook.heard["r1"][1:-1]] == [0, 1, 2]
    for index in (0, 1):  # already ended: closing adds nothing
        driver.close(index, None)
    assert len(hook.heard["r0"]) == 7


def test_a_runs_error_is_rebuilt_for_the_hooks() -> None:
    from toolwire.integrations.ray_runs import _Failure

    hook = Recorder()
    driver = DriverSide((hook,), None, relay=None)
    error = MaxRoundsExceededError(0, "no final answer")
    failed = RunEnded("r", "error", time.time(), None, None, 0, 0, Usage())
    driver.feed([("event", 0, 0, started("r"), None), ("event", 0, 1, failed, _Failure.of(error))])
    last = hook.heard["r"][-1]
    assert isinstance(last.error, MaxRoundsExceededError)
    assert str(last.error) == str(error)
    assert last.error.max_rounds == 0


def test_a_run_whose_worker_died_still_ends_in_the_hooks() -> None:
    hook = Recorder()
    driver = DriverSide((hook,), None, relay=None)
    driver.feed([("event", 3, 0, started("r3"), None), ("event", 3, 1, ToolCallRunning(0), None)])
    lost = ToolExecutionError("the Ray worker running prompt #3 failed (WorkerCrashedError)")
    driver.close(3, lost)
    driver.close(3, lost)
    *_, last = hook.heard["r3"]
    assert isinstance(last, RunEnded)
    assert (last.run_id, last.outcome, last.error) == ("r3", "error", lost)
    assert sum(isinstance(e, RunEnded) for e in hook.heard["r3"]) == 1


def test_a_hook_that_refuses_a_run_fails_that_run() -> None:
    driver = DriverSide((Recorder(refuse=True),), None, relay=None)
    driver.feed(run_messages(0, "r0", 1))
    assert isinstance(driver.failed[0], OSError)
    assert 1 not in driver.failed


def test_done_messages_are_noted() -> None:
    driver = DriverSide((), None, relay=None)
    driver.feed([("done", 2)])
    assert driver.done == {2}


def test_an_approve_callback_never_travels_without_a_relay() -> None:
    pytest.importorskip("ray")
    from toolwire import Agent, Permissions
    from toolwire.errors import BackendError
    from toolwire.integrations.ray_runs import pack_agent
    from toolwire.testing import ScriptedModel

    agent = Agent(ScriptedModel([]), permissions=Permissions(ask=["*"]), approve=lambda r: True)
    with pytest.raises(BackendError, match="approve= callback"):
        pack_agent(agent)


def test_an_event_that_could_not_be_sent_is_a_warning_and_the_rest_still_arrive() -> None:
    hook = Recorder()
    driver = DriverSide((hook,), None, relay=None)
    messages = run_messages(0, "r0", 2)
    messages[1] = ("event", 0, 1, None, "ToolCallRunning (PicklingError: no)")
    with pytest.warns(RuntimeWarning, match="could not be sent to the driver: ToolCallRunning"):
        driver.feed(messages)
    assert [type(e).__name__ for e in hook.heard["r0"]] == [
        "RunStarted",
        "ToolCallRunning",
        "RunEnded",
    ]


def test_runs_left_open_when_the_caller_stops_end_as_cancelled() -> None:
    hook = Recorder()
    driver = DriverSide((hook,), None, relay=None)
    driver.feed(run_messages(0, "r0", 1))  # ended
    driver.feed(run_messages(1, "r1", 1)[:2])  # still going
    driver.cancel_all()
    assert [e.outcome for e in hook.heard["r1"] if isinstance(e, RunEnded)] == ["cancelled"]
    assert sum(isinstance(e, RunEnded) for e in hook.heard["r0"]) == 1


def test_an_event_that_does_not_pickle_travels_as_a_note() -> None:
    pytest.importorskip("ray")
    import threading

    from toolwire.integrations.ray_relay import _sendable

    fine = ("event", 0, 1, ToolCallRunning(0), None)
    assert _sendable(fine) == fine
    _, index, number, event, note = _sendable(("event", 0, 2, threading.Lock(), None))
    assert (index, number, event) == (0, 2, None)
    assert note.startswith("lock (TypeError")


def test_an_approve_mcp_callback_never_travels_without_a_relay() -> None:
    pytest.importorskip("ray")
    from toolwire import Agent
    from toolwire.errors import BackendError
    from toolwire.integrations.ray_runs import pack_agent
    from toolwire.testing import ScriptedModel

    agent = Agent(ScriptedModel([]), approve_mcp=lambda r: True)
    with pytest.raises(BackendError, match="approve_mcp= callback"):
        pack_agent(agent)
