"""A call's one state (run/calls.py) and early starts (run/early.py), without a loop."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire import tool
from toolwire.messages import ToolResult, ToolStatus
from toolwire.run.calls import TRANSITIONS, CallState, TurnCall
from toolwire.run.early import EarlyStarts
from toolwire.tools.tool import Toolset

from .helpers import request


@tool(concurrency_safe=True, side_effects=False)
def look(q: str) -> str:
    """Read."""
    return q


@tool
def change(q: str) -> str:
    """Write."""
    return q


TOOLS = Toolset([look, change])


def _call(name: str, index: int) -> TurnCall:
    req = request(name, {"q": "x"}, index=index)
    call = TurnCall(req, TOOLS.validate(req), TOOLS.get(name))
    call.safe = call.runnable and name == "look"
    return call


def test_an_admitted_call_makes_its_validation_when_first_read() -> None:
    """The common call comes without a Validation; read, it is check's verdict, made
    once: every read gets the same object."""
    req = request("look", {"q": "x"})
    found, value, verdict = TOOLS.admit(req)
    assert verdict is None and found is look
    call = TurnCall(req, verdict, found, value)
    assert call.runnable and call.input == {"q": "x"} and call.verdict is None
    made = call.validation
    assert made == TOOLS.check(req)[1] and call.validation is made and call.verdict is made
    assert call.record().validation_kind is None and not call.record().repaired


def test_a_call_not_admitted_comes_with_its_verdict() -> None:
    """An unknown tool or arguments that are not JSON: the verdict is made at once, and
    the call holds its input (none) and that verdict."""
    for req in (request("nowhere", {"q": "x"}), request("look", "{not json")):
        found, value, verdict = TOOLS.admit(req)
        assert verdict is not None and not verdict.ok and value is None
        call = TurnCall(req, verdict, found, value)
        assert not call.runnable and call.validation is verdict and call.input is None
        assert call.record().validation_kind == verdict.kind


def test_a_call_moves_only_along_the_table() -> None:
    call = _call("look", 0)
    assert call.state is CallState.WAITING and call.needs_permission and not call.started
    call.advance(CallState.ASKING)
    call.advance(CallState.ALLOWED)
    assert not call.needs_permission
    call.began()
    assert call.started
    call.began()  # its retry begins again: still running
    call.answer(ToolResult("call_0", "look", "x"))
    assert call.state is CallState.DONE and call.answered
    with pytest.raises(AssertionError, match=r"DONE -> CallState\.RUNNING"):
        call.advance(CallState.RUNNING)


def test_a_call_that_never_began_is_not_executed_when_stopped() -> None:
    call = _call("change", 0)
    call.advance(CallState.ALLOWED)
    assert call.unfinished("stop").status is ToolStatus.NOT_EXECUTED
    call.began()
    assert call.unfinished("stop").status is ToolStatus.CANCELLED


def test_any_state_may_be_discarded_once() -> None:
    for state in CallState:
        if state is CallState.DISCARDED:
            continue
        call = _call("look", 0)
        call.state = state
        call.advance(CallState.DISCARDED)
        with pytest.raises(AssertionError):
            call.advance(CallState.DISCARDED)
    assert not TRANSITIONS[CallState.DONE] and not TRANSITIONS[CallState.DISCARDED]


def test_the_record_carries_the_failure_class() -> None:
    call = _call("look", 0)
    denied = ToolResult("call_0", "look", "no", ToolStatus.DENIED)
    assert call.record(denied).failure_class == "denied"
    assert call.record().failure_class is None


def _starts(names: list[str], order: list[int], *, limit: int | None = None) -> list[int]:
    """Indices started early when every call has appeared (``ToolCallStarted``, in index
    order) and then their arguments close in ``order``."""
    early = EarlyStarts(True)
    ready: dict[int, TurnCall] = {}
    started: list[int] = []
    for index in range(len(names)):
        early.know(index, ready)
    for index in order:
        early.know(index, ready)
        ready[index] = _call(names[index], index)
        early.advance(
            ready,
            lambda: limit is None or len(started) < limit,
            lambda call: started.append(call.index),
        )
    return started


def test_early_starts_stop_at_the_first_unsafe_call() -> None:
    assert _starts(["look", "look", "change", "look"], [0, 1, 2, 3]) == [0, 1]
    assert _starts(["look", "nope", "look"], [0, 1, 2]) == [0, 2]  # invalid orders nothing
    assert _starts(["look", "look"], [1, 0]) == [0, 1]  # waits for the earlier call
    assert _starts(["look", "look", "look"], [0, 1, 2], limit=2) == [0, 1]


def test_a_call_before_one_already_passed_ends_early_starts() -> None:
    early = EarlyStarts(True)
    ready = {2: _call("look", 2)}
    early.know(2, {})
    early.advance(ready, lambda: True, lambda call: None)
    early.know(1, ready)
    assert not early.open


@given(st.permutations(range(5)), st.lists(st.booleans(), min_size=5, max_size=5))
def test_early_starts_are_a_safe_prefix_whatever_the_arrival_order(
    order: list[int], safe: list[bool]
) -> None:
    names = ["look" if s else "change" for s in safe]
    started = _starts(names, order)
    prefix = names.index("change") if "change" in names else len(names)
    assert sorted(started) == started == list(range(prefix))  # in order, all of them


@tool(concurrency_safe=True)
def mark(q: str) -> str:
    """Safe but not harmless to discard: waits for its batch."""
    return q


_KINDS = {"look": look, "change": change, "mark": mark}
_EVENTS = st.lists(st.tuples(st.sampled_from(["started", "ready"]), st.integers(0, 3)), max_size=12)


def _replay(
    events: list[tuple[str, int]], names: list[str], limit: int | None, *, fast: bool
) -> tuple[list[int], bool, int, list[int]]:
    """Feed a turn's stream to early starts as ``TurnRun`` does: with
    :meth:`EarlyStarts.ready` for a call's first close (``fast``), or with ``know``
    before the call is prepared and then ``advance`` (the general path)."""
    early = EarlyStarts(True)
    ready: dict[int, TurnCall] = {}
    launched: list[int] = []
    tools = Toolset(list(_KINDS.values()))

    def may_launch() -> bool:
        return limit is None or len(launched) < limit

    for kind, index in events:
        if kind == "started":
            early.know(index, ready)
            continue
        if index in ready or not fast:
            early.know(index, ready)
        if index not in ready:
            req = request(names[index], {"q": "x"}, index=index)
            call = TurnCall(req, tools.validate(req), tools.get(names[index]))
            call.safe = call.runnable and names[index] != "change"
            ready[index] = call
            if fast:
                start = early.ready(call, may_launch)
                if start:
                    launched.append(index)
                if start is not None:
                    continue
        early.advance(ready, may_launch, lambda c: launched.append(c.index))
    return launched, early.open, early.position, early._known


@given(
    _EVENTS,
    st.lists(st.sampled_from(["look", "look", "mark", "change", "nope"]), min_size=4, max_size=4),
    st.none() | st.integers(0, 4),
)
def test_a_first_close_decides_as_know_then_advance(
    events: list[tuple[str, int]], names: list[str], limit: int | None
) -> None:
    """``EarlyStarts.ready`` (one call decided alone in the common order) starts the
    same calls, in the same order, and leaves the same state as the general path,
    whatever the order the stream announces and closes calls in."""
    assert _replay(events, names, limit, fast=True) == _replay(events, names, limit, fast=False)
