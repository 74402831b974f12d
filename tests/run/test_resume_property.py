"""Property: whatever the log knows of the last turn's calls, a resumed run gives each
call exactly one result, never runs a call whose result is logged, and never runs again
a call that may have taken effect and is not harmless to repeat.

The store here is a small in-memory :class:`~toolwire.run.store.RunStore` (the protocol
the loop needs; ``AuditLog`` is tested against the same behaviour in
``test_durable.py`` and the SIGKILL test), so that each example costs no file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import Agent, Permissions, tool
from toolwire.messages import AssistantMessage, ToolCall, ToolResult, ToolStatus, UserMessage
from toolwire.run.events import ObservedEvent, RunStarted, ToolResultReady
from toolwire.run.observers import RunListener
from toolwire.run.store import ApprovalRecord, CallStart, SavedCall, SavedRun
from toolwire.testing import ScriptedModel, text_turn

RAN: list[str] = []


@tool(concurrency_safe=True)
def harmful(id: str) -> str:
    """Has side effects; not idempotent."""
    RAN.append(id)
    return f"harmful {id}"


@tool(concurrency_safe=True, side_effects=False)
def harmless(id: str) -> str:
    """Reads."""
    RAN.append(id)
    return f"harmless {id}"


@tool(idempotent=True)
def idem(id: str) -> str:
    """Has side effects, idempotent."""
    RAN.append(id)
    return f"idem {id}"


class MemoryStore:
    """A run store that holds one saved run in memory."""

    def __init__(self, saved: SavedRun) -> None:
        self.saved = saved
        self.owner: str | None = None
        self.results: list[ToolResult] = []
        self.starts: list[CallStart] = []
        self.approvals: list[ApprovalRecord] = []

    def begin(self, start: RunStarted) -> RunListener:
        def listen(event: ObservedEvent) -> None:
            if isinstance(event, ToolResultReady):
                self.results.append(event.result)

        return listen

    def load_run(self, ref: str) -> SavedRun:
        return self.saved

    def claim_run(self, saved: SavedRun, owner: str, by: str) -> None:
        self.owner = owner

    def record_approvals(self, run_id: str, approvals: Sequence[ApprovalRecord]) -> None:
        self.approvals += approvals

    def record_call_start(self, run_id: str, start: CallStart) -> None:
        self.starts.append(start)


CALL = st.tuples(
    st.sampled_from(["harmful", "harmless", "idem"]),
    st.sampled_from(["done", "started", "pending", "unstarted"]),
    st.sampled_from([None, True, False, "no thanks"]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(CALL, min_size=1, max_size=6))
def test_each_call_gets_one_result_and_nothing_runs_twice(
    calls: list[tuple[str, str, Any]],
) -> None:
    RAN.clear()
    saved_calls, approvals = [], {}
    for n, (name, drawn, answer) in enumerate(calls):
        # Only calls that need approval wait for it.
        state = "unstarted" if drawn == "pending" and name != "harmful" else drawn
        call = ToolCall(f"c{n}", name, json.dumps({"id": f"c{n}"}))
        logged = ToolResult(call.id, name, f"logged {n}") if state == "done" else None
        saved_calls.append(SavedCall(call, logged, state == "started", state == "pending"))
        if state == "pending" and answer is not None:
            approvals[call.id] = answer
    turn = AssistantMessage([c.call for c in saved_calls])
    saved = SavedRun("r1", "interrupted", "m", [UserMessage("go"), turn], round=1,
                     calls=saved_calls, rounds=1, requests=1)  # fmt: skip
    store = MemoryStore(saved)
    agent = Agent(
        ScriptedModel([text_turn("done")]),
        [harmful, harmless, idem],
        permissions=Permissions(ask=["harmful"]),
        approve="pause",
        log=store,
    )
    result = agent.resume_sync("r1", approvals)

    answered = [m for m in result.messages[2:] if isinstance(m, ToolResult)]
    by_id = {m.call_id: m for m in answered}
    assert len(by_id) == len(answered)  # at most one result per call
    held = {p.call_id for p in result.pending}
    assert result.paused == bool(held)
    for item in saved_calls:
        call, harmless_tool = item.call, item.call.name != "harmful"
        if item.result is not None:  # logged: kept, never run again
            assert by_id[call.id] == item.result and call.id not in RAN
        elif item.started and not harmless_tool:  # may have taken effect: never re-run
            assert by_id[call.id].status is ToolStatus.INTERRUPTED and call.id not in RAN
        elif call.id in approvals and approvals[call.id] is not True:  # denied
            assert by_id[call.id].status is ToolStatus.DENIED and call.id not in RAN
        elif call.id in held:  # waits again (no answer, or behind a held call)
            assert call.id not in by_id and call.id not in RAN
        elif call.id in by_id:
            assert RAN.count(call.id) == 1 and by_id[call.id].status is ToolStatus.OK
        else:  # deferred behind a held call: no result, not run
            assert result.paused and call.id not in RAN
    if not result.paused:  # every call answered, in call order
        assert [m.call_id for m in answered] == [c.call.id for c in saved_calls]
    # The log hears of every new result once; start rows only for calls that may not
    # run twice, written before they ran.
    new = store.results
    assert len({r.call_id for r in new}) == len(new)
    assert {s.call_id for s in store.starts} == {
        c for c in RAN if c in {i.call.id for i in saved_calls if i.call.name == "harmful"}
    }
