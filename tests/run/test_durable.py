"""Durable runs: pause for approval, resume from the audit log (a real SQLite file)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, AuditLog, Permissions, ToolContext, tool
from toolwire.errors import (
    AuditLogError,
    CallerError,
    RunClaimedError,
    RunNotFoundError,
    RunNotResumableError,
)
from toolwire.messages import AssistantMessage, ReasoningPart, ToolCall, ToolResult, ToolStatus
from toolwire.run.model import ModelEvent, ModelRequest, TurnDone
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.turn import ToolRequest, Turn

from .helpers import answered_in_order, run

RAN: list[tuple[str, str]] = []


@tool(side_effects=False, concurrency_safe=True)
def read(path: str) -> str:
    """Read a file."""
    RAN.append(("read", path))
    return f"text of {path}"


@tool
def delete(path: str) -> str:
    """Delete a file."""
    RAN.append(("delete", path))
    return f"deleted {path}"


ASK = Permissions(ask=["delete"])


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _agent(db: Path, turns: list[Any], **options: Any) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(turns)
    options.setdefault("permissions", ASK)
    options.setdefault("approve", "pause")
    return Agent(model, options.pop("tools", [read, delete]), log=AuditLog(db), **options), model


def _pause(db: Path) -> str:
    """A run paused on delete(b), between read(a) and read(c)."""
    agent, _ = _agent(
        db,
        [tool_call_turn(("read", {"path": "a"}, "c1"), ("delete", {"path": "b"}, "c2"),
                        ("read", {"path": "c"}, "c3"))],
    )  # fmt: skip
    result = agent.run_sync("tidy up")
    assert result.paused and result.outcome == "paused"
    return result.run_id


def _tool_results(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_pause_runs_the_batch_and_holds_the_call_and_later_batches(tmp_path: Path) -> None:
    agent, model = _agent(
        tmp_path / "runs.db",
        [tool_call_turn(("read", {"path": "a"}, "c1"), ("delete", {"path": "b"}, "c2"),
                        ("read", {"path": "c"}, "c3"))],
    )  # fmt: skip
    result = agent.run_sync("tidy up")
    assert result.paused and result.outcome == "paused"
    assert RAN == [("read", "a")]  # read(c) comes after the held call: it waits
    [pending] = result.pending
    assert (pending.call_id, pending.tool, pending.arguments) == ("c2", "delete", {"path": "b"})
    assert pending.raw_arguments == '{"path": "b"}' and pending.repaired is False
    assert model.remaining == 0  # no further request
    assert isinstance(result.messages[-1], ToolResult) and result.messages[-1].call_id == "c1"
    report = AuditLog(tmp_path / "runs.db").inspect(result.run_id)
    assert report["outcome"] == "paused"
    assert [e["kind"] for e in report["timeline"]] == ["paused"]


def test_resume_applies_approvals_and_runs_the_rest_in_call_order(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, model = _agent(db, [text_turn("done")])
    result = agent.resume_sync(run_id, approvals={"c2": True})
    assert result.run_id == run_id and not result.paused and result.output == "done"
    assert RAN == [("read", "a"), ("delete", "b"), ("read", "c")]
    assert _tool_results(model.requests[0]) == [
        ("c1", "text of a"),
        ("c2", "deleted b"),
        ("c3", "text of c"),
    ]
    answered_in_order(result.messages)
    report = AuditLog(db).inspect(run_id)
    assert report["outcome"] == "ok"
    kinds = [(e["kind"], e.get("call_id")) for e in report["timeline"]]
    assert kinds[:3] == [("paused", None), ("resumed", None), ("approval", "c2")]
    approval = report["timeline"][2]
    assert approval["approved"] is True and approval["by"] == "api"
    statuses = sorted((c["call_id"], c["status"]) for c in report["calls"])
    assert statuses == [("c1", "ok"), ("c2", "ok"), ("c3", "ok")]  # one row per call


@pytest.mark.parametrize(
    ("answer", "said"),
    [(False, "was not approved"), ("not today, it is shared", "not today, it is shared")],
)
def test_a_denial_reaches_the_model_with_its_reason(
    tmp_path: Path, answer: bool | str, said: str
) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, model = _agent(db, [text_turn("ok, kept it")])
    result = agent.resume_sync(run_id, approvals={"c2": answer})
    assert ("delete", "b") not in RAN
    denied = [m for m in result.messages if isinstance(m, ToolResult) and m.call_id == "c2"]
    assert [m.status for m in denied] == [ToolStatus.DENIED]
    assert said in denied[0].content
    assert said in dict(_tool_results(model.requests[0]))["c2"]
    entry = [e for e in AuditLog(db).inspect(run_id)["timeline"] if e["kind"] == "approval"]
    assert entry[0]["approved"] is False and said in entry[0]["reason"]


def test_resume_without_an_answer_pauses_again(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, model = _agent(db, [])
    result = agent.resume_sync(run_id)
    assert result.paused and [p.call_id for p in result.pending] == ["c2"]
    assert model.requests == [] and RAN == [("read", "a")]
    agent, model = _agent(db, [text_turn("done")])
    assert agent.resume_sync(run_id, {"c2": True}).output == "done"
    assert RAN == [("read", "a"), ("delete", "b"), ("read", "c")]


def test_resume_is_awaitable(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, _ = _agent(db, [text_turn("done")])
    result = run(agent.resume(run_id, approvals={"c2": True}))
    assert result.run_id == run_id and result.output == "done"


def test_rounds_already_spent_count(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, model = _agent(db, [text_turn("forced answer")], max_rounds=1)
    result = agent.resume_sync(run_id, approvals={"c2": True})
    assert result.forced_final and model.requests[0]["tool_choice"] == "none"
    assert result.rounds == 1


# -- bad input ---------------------------------------------------------------------------


def test_approvals_for_calls_that_are_not_pending(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, _ = _agent(db, [text_turn("done")])
    with pytest.raises(CallerError, match=r"not pending .*c1 \(pending: c2\)"):
        agent.resume_sync(run_id, approvals={"c1": True})
    with pytest.raises(CallerError, match=r"True .*False .*reason"):
        agent.resume_sync(run_id, approvals={"c2": 1})  # type: ignore[dict-item]
    assert RAN == [("read", "a")]  # nothing ran; the run is still paused and resumable
    assert agent.resume_sync(run_id, approvals={"c2": True}).output == "done"


def test_a_run_that_ended_cannot_be_resumed(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    agent, _ = _agent(db, [text_turn("hello")])
    run_id = agent.run_sync("hi").run_id
    with pytest.raises(RunNotResumableError, match="outcome 'ok'"):
        agent.resume_sync(run_id)


def test_an_unknown_id_lists_the_latest_runs(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, _ = _agent(db, [])
    with pytest.raises(RunNotFoundError, match=f"latest runs: {run_id}"):
        agent.resume_sync("abcdef")


def test_resume_needs_a_log() -> None:
    agent = Agent(ScriptedModel([]), [read], permissions=ASK, approve="pause")
    with pytest.raises(CallerError, match="needs the agent's audit log"):
        agent.resume_sync("last")


def test_a_log_from_a_newer_toolwire_is_refused(tmp_path: Path) -> None:
    import sqlite3

    from toolwire.observe.schema import SCHEMA_VERSION

    db = tmp_path / "runs.db"
    run_id = _pause(db)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    agent, _ = _agent(db, [])
    with pytest.raises(AuditLogError, match="newer toolwire"):
        agent.resume_sync(run_id, {"c2": True})
    assert RAN == [("read", "a")]


def test_a_tool_that_no_longer_exists_has_its_pending_call_denied(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, model = _agent(db, [text_turn("could not delete")], tools=[read])
    result = agent.resume_sync(run_id)
    assert not result.paused and result.output == "could not delete"
    sent = dict(_tool_results(model.requests[0]))
    assert "`delete` is no longer available" in sent["c2"]
    assert sent["c3"] == "text of c"  # the deferred read still runs, after it
    assert RAN == [("read", "a"), ("read", "c")]


def test_two_claims_of_one_run_leave_one_owner(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    first, second = AuditLog(db), AuditLog(db)
    saved_first, saved_second = first.load_run(run_id), second.load_run(run_id)
    first.claim_run(saved_first, "host:1:first", "api")
    with pytest.raises(RunClaimedError, match="claimed by another process") as caught:
        second.claim_run(saved_second, "host:2:second", "api")
    assert caught.value.owner == "host:1:first"
    resumes = [e for e in first.inspect(run_id)["timeline"] if e["kind"] == "resumed"]
    assert [e["owner"] for e in resumes] == ["host:1:first"]
    first.close()
    second.close()


class _BlockedModel:
    """Answers after ``release`` is set; tells ``asked`` when its request arrives."""

    name = "blocked"

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return self._play()

    async def _play(self) -> AsyncIterator[ModelEvent]:
        self.asked.set()
        await asyncio.to_thread(self.release.wait, 60)
        yield TurnDone(Turn(AssistantMessage([]), [], "stop"))


def test_a_second_resume_while_the_first_runs_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = _pause(db)
    model = _BlockedModel()
    first = Agent(model, [read, delete], permissions=ASK, approve="pause", log=AuditLog(db))
    outcome: list[Any] = []
    worker = threading.Thread(
        target=lambda: outcome.append(first.resume_sync(run_id, {"c2": True}))
    )
    worker.start()
    try:
        assert model.asked.wait(60)
        second, _ = _agent(db, [text_turn("twice")])
        with pytest.raises(RunClaimedError, match="still running"):
            second.resume_sync(run_id, {"c2": True})
    finally:
        model.release.set()
        worker.join(60)
    assert outcome and not outcome[0].paused
    assert RAN.count(("delete", "b")) == 1


# -- the history as logged ---------------------------------------------------------------


class _SigningModel:
    """A turn with a signed reasoning part and a call that needs approval."""

    name = "signing"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        return self._play(len(self.requests))

    async def _play(self, number: int) -> AsyncIterator[ModelEvent]:
        if number > 1:
            yield TurnDone(Turn(AssistantMessage([]), [], "stop"))
            return
        call = ToolCall("t1", "delete", '{"path": "sk-live-0123456789abcdefghijklmnop"}')
        parts = [ReasoningPart("think", signature="SIG/secret+kept=="), call]
        request = ToolRequest(call.id, call.name, call.arguments, {"path": call.arguments[10:-2]})
        yield TurnDone(Turn(AssistantMessage(parts), [request], "tool_calls"))


def test_signed_parts_come_back_verbatim_and_redacted_values_redacted(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    model = _SigningModel()
    agent = Agent(model, [delete], permissions=ASK, approve="pause", log=AuditLog(db))
    run_id = agent.run_sync("go").run_id
    agent.resume_sync(run_id, {"t1": True})
    turn = model.requests[1].messages[1]
    assert isinstance(turn, AssistantMessage)
    [reasoning] = [p for p in turn.parts if isinstance(p, ReasoningPart)]
    assert reasoning.signature == "SIG/secret+kept=="  # signed: verbatim
    [call] = turn.tool_calls
    assert "sk-live-0123456789abcdefghijklmnop" not in call.arguments  # redacted in the log
    assert RAN and "sk-live-0123456789abcdefghijklmnop" not in RAN[0][1]


def test_the_trace_page_shows_the_pause_the_approval_and_the_resume(tmp_path: Path) -> None:
    from toolwire.observe.query import load_run
    from toolwire.observe.store import connect
    from toolwire.observe.trace import render_html

    db = tmp_path / "runs.db"
    run_id = _pause(db)
    agent, _ = _agent(db, [text_turn("done")])
    agent.resume_sync(run_id, approvals={"c2": "not now"}, by="alice")
    conn = connect(str(db), readonly=True)
    try:
        page = render_html(load_run(conn, run_id, str(db)))
    finally:
        conn.close()
    events = page[page.index('class="event"') :]
    assert "paused" in events and "waiting for delete (c2)" in events
    assert "delete (c2) denied (not now) by alice" in events
    assert events.index("waiting for delete") < events.index("resumed") < events.index("by alice")


def test_a_cancelled_run_goes_on_where_it_stopped(tmp_path: Path) -> None:
    @tool(side_effects=False)
    def interrupt() -> str:
        """Stops the run as a Ctrl-C would."""
        raise KeyboardInterrupt

    db = tmp_path / "runs.db"
    agent, _ = _agent(db, [tool_call_turn(("interrupt", {}, "k1"))], tools=[interrupt])
    with pytest.raises(KeyboardInterrupt):
        agent.run_sync("go")
    assert AuditLog(db).inspect("last")["outcome"] == "cancelled"
    agent, model = _agent(db, [text_turn("went on")], tools=[interrupt])
    result = agent.resume_sync("last")
    assert result.output == "went on"
    [(call_id, text)] = _tool_results(model.requests[0])
    assert call_id == "k1" and "cancelled" in text  # its logged result, not run again


def test_a_run_whose_answer_was_logged_ends_with_it(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "runs.db"
    agent, _ = _agent(db, [text_turn("the answer")])
    run_id = agent.run_sync("hi").run_id
    conn = sqlite3.connect(db)  # as if the process died before the run's end was written
    conn.execute("UPDATE runs SET outcome = 'running', pid = 999999999 WHERE run_id = ?", (run_id,))
    conn.commit()
    conn.close()
    agent, model = _agent(db, [])
    result = agent.resume_sync(run_id)
    assert result.output == "the answer" and model.requests == []
    assert AuditLog(db).inspect(run_id)["outcome"] == "ok"


def test_a_call_held_while_the_model_streams_still_lets_its_batch_run(tmp_path: Path) -> None:
    @tool(side_effects=False, concurrency_safe=True)
    def peek(path: str) -> str:
        """Reads, but needs approval (it may read secrets)."""
        RAN.append(("peek", path))
        return f"peeked {path}"

    @tool(concurrency_safe=True)
    def save(path: str) -> str:
        """Writes (side effects: it waits for the end of the stream, in peek's batch)."""
        RAN.append(("save", path))
        return f"saved {path}"

    turn = tool_call_turn(("peek", {"path": "a"}, "p1"), ("save", {"path": "b"}, "s1"),
                          ("delete", {"path": "c"}, "d1"))  # fmt: skip
    # A paced stream (the event loop runs between chunks): peek starts early (safe,
    # harmless) and is held while the model still streams.
    model = ScriptedModel([turn], chunk_delay=0.001)
    agent = Agent(model, [peek, save, delete], permissions=Permissions(ask=["peek"]),
                  approve="pause", log=AuditLog(tmp_path / "runs.db"))  # fmt: skip
    result = agent.run_sync("go")
    assert [p.call_id for p in result.pending] == ["p1"]
    assert RAN == [("save", "b")]  # its batch-mate ran; delete (a later batch) waits


def test_a_resumed_call_keeps_its_idempotency_key(tmp_path: Path) -> None:
    from toolwire.tools.context import idempotency_key

    keys: dict[str, str] = {}

    @tool
    def pay(amount: int, context: ToolContext) -> str:
        """Pays (the key makes a repeated request take effect once)."""
        keys[context.call_id] = context.idempotency_key
        return "paid"

    db = tmp_path / "runs.db"
    turn = tool_call_turn(("read", {"path": "a"}, "c1"), ("pay", {"amount": 5}, "p1"),
                          ("pay", {"amount": 6}, "p2"))  # fmt: skip
    agent, _ = _agent(db, [turn], tools=[read, pay], permissions=Permissions(ask=["pay"]))
    run_id = agent.run_sync("pay twice").run_id
    agent, _ = _agent(db, [text_turn("paid")], tools=[read, pay],
                      permissions=Permissions(ask=["pay"]))  # fmt: skip
    agent.resume_sync(run_id, {"p1": True})  # p2 waits behind p1: asked, held again
    agent, _ = _agent(db, [text_turn("paid")], tools=[read, pay],
                      permissions=Permissions(ask=["pay"]))  # fmt: skip
    agent.resume_sync(run_id, {"p2": True})
    # The keys the calls would have had in the first process: round 1, places 1 and 2.
    assert keys == {"p1": idempotency_key(run_id, 1, 1), "p2": idempotency_key(run_id, 1, 2)}


def test_a_structured_output_run_pauses_and_resumes_to_its_output(tmp_path: Path) -> None:
    from pydantic import BaseModel

    class Count(BaseModel):
        n: int

    db = tmp_path / "runs.db"
    agent, _ = _agent(db, [tool_call_turn(("delete", {"path": "b"}, "c2"))], output_type=Count)
    paused = agent.run_sync("delete b, then count")
    assert paused.paused and paused.output is None
    agent, _ = _agent(db, [tool_call_turn(("final_result", {"n": 3}, "f1"))], output_type=Count)
    result = agent.resume_sync(paused.run_id, {"c2": True})
    assert result.output == Count(n=3) and RAN == [("delete", "b")]
