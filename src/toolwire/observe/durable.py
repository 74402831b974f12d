"""The audit log as a run store (:class:`toolwire.run.store.RunStore`): reading a run
back as the loop's state, claiming it, and its timeline rows.

A run's history is rebuilt from its request rows: each holds the messages added since
the previous request (or the whole history, when it was rewritten in between: then
their count is the row's ``history_length``), and, since schema 5, the model's turn
verbatim (``requests.message``). The last turn's calls are matched with their result
rows and with the ``call_started`` rows of the ``timeline`` table: a call with a start
row and no result was running when the process stopped. A request that failed (schema
10: its row has an ``error``) holds no messages and no turn: it counts as a request
made, and is skipped otherwise.

Values come back as the log stored them: redacted values stay redacted (a resumed run
sends ``[REDACTED]`` where a secret was, and a tool gets the redacted argument), while
signed and encrypted provider parts (reasoning signatures, encrypted content) are kept
verbatim, so a provider accepts the turn again.

The timeline rows (``call_started``, ``paused``, ``approval``, ``resumed``) are what
``toolwire inspect`` and the trace page show between the run's requests.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..messages import AssistantMessage, Message, TextPart, ToolCall, ToolResult, ToolStatus, Usage
from ..run.store import ApprovalRecord, CallStart, SavedCall, SavedRun
from .query import load_run
from .replay import messages_from_json, parts_from_json
from .store import JsonValue, Row

Images = dict[str, tuple[str, bytes]]  # a run's logged images by hash (load_run's)

__all__ = [
    "INSERT_TIMELINE",
    "approval_row",
    "call_start_row",
    "claim",
    "load_saved",
    "timeline_row",
]

INSERT_TIMELINE = (
    "INSERT INTO timeline (run_id, seq, at, kind, round, call_id, detail)"
    " SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ? FROM timeline WHERE run_id = ?"
)


def timeline_row(
    run_id: str,
    at: float,
    kind: str,
    detail: dict[str, Any],
    *,
    round_: int | None = None,
    call_id: str | None = None,
) -> Row:
    """One timeline row (its ``seq`` follows the run's last one)."""
    return (INSERT_TIMELINE, (run_id, at, kind, round_, call_id, JsonValue(detail), run_id))


def call_start_row(run_id: str, start: CallStart) -> Row:
    """The row committed before a call that may not run twice starts."""
    return timeline_row(
        run_id, start.at, "call_started", {"tool": start.tool, "index": start.index},
        round_=start.round, call_id=start.call_id,
    )  # fmt: skip


def approval_row(run_id: str, answer: ApprovalRecord) -> Row:
    """The row of one answer to a pending call."""
    detail = {"tool": answer.tool, "approved": answer.approved, "by": answer.by}
    if answer.reason is not None:
        detail["reason"] = answer.reason
    return timeline_row(run_id, answer.at, "approval", detail, call_id=answer.call_id)


# -- reading ------------------------------------------------------------------------------


def load_saved(conn: sqlite3.Connection, ref: str, path: str) -> SavedRun:
    """The run ``ref`` names, as the loop's state (see the module docstring).

    Raises:
        RunNotFoundError: No run matches.
    """
    run = load_run(conn, ref, path)
    run_id = run["run_id"]
    made = run["requests"]
    requests = [r for r in made if not r.get("error")]  # a failed request has no turn
    timeline = [dict(t, detail=json.loads(t["detail"])) for t in run["timeline"]]
    saved = SavedRun(
        run_id=run_id,
        outcome=run["outcome"],
        model=run["model"],
        messages=_history(requests, run["images"]),
        error_type=run["error_type"],
        owner=run["owner"],
        pid=run["pid"],
        settings=json.loads(run["settings"]),
        tools=[_tool_name(t) for t in json.loads(run["tools"])],
        rounds=sum(1 for r in requests if r["tool_calls"] != "[]"),
        requests=len(made),
        usage=_usage(requests),
        claim=(run["outcome_stored"], run["pid"], run["owner"]),
    )
    if requests:
        saved.round = requests[-1]["round"]
        saved.calls = _last_calls(saved, run["calls"], timeline, run["images"])
    return saved


def _tool_name(definition: dict[str, Any]) -> str:
    inner = definition.get("function") or definition.get("custom") or definition
    return str(inner.get("name", ""))


def _history(requests: list[dict[str, Any]], images: Images) -> list[Message]:
    history: list[Message] = []
    for row in requests:
        new = messages_from_json(row["messages"], images)  # images back from the log
        history = history + new if len(history) + len(new) == row["history_length"] else new
    if requests:
        history.append(_turn(requests[-1]))
    return history


def _turn(row: dict[str, Any]) -> AssistantMessage:
    """The request's turn: verbatim since schema 5, else rebuilt from its text and calls."""
    if row.get("message"):
        message = messages_from_json(row["message"])[0]
        assert isinstance(message, AssistantMessage)
        return message
    parts: list[Any] = [TextPart(row["text"])] if row["text"] else []
    parts += [ToolCall(c["id"], c["name"], c["arguments"]) for c in json.loads(row["tool_calls"])]
    return AssistantMessage(parts)


def _usage(requests: list[dict[str, Any]]) -> Usage:
    usage = Usage()
    for r in requests:
        usage = usage + Usage(
            r["input_tokens"], r["output_tokens"], r["cache_read_tokens"], 0, r["reasoning_tokens"]
        )
    return usage


def _last_calls(
    saved: SavedRun, rows: list[dict[str, Any]], timeline: list[dict[str, Any]], images: Images
) -> list[SavedCall]:
    """The last turn's calls, each with its logged result and start, and whether it
    waits for approval."""
    last = saved.messages[-1]
    assert isinstance(last, AssistantMessage)
    here = [r for r in rows if r["round"] == saved.round and r["status"] != "discarded"]
    results = {r["call_id"]: r for r in reversed(here)}  # the first row of a call wins
    started = {
        t["call_id"] for t in timeline if t["kind"] == "call_started" and t["round"] == saved.round
    }
    paused = [t for t in timeline if t["kind"] == "paused" and t["round"] == saved.round]
    pending = set(paused[-1]["detail"].get("pending", [])) if paused else set()
    calls = []
    for call in last.tool_calls:
        row = results.get(call.id)
        result = None
        if row is not None:
            parts = (
                parts_from_json(json.loads(row["parts"]), images)
                if row.get("parts") and not row.get("images_refused")  # the model read none
                else ()
            )
            status = ToolStatus(row["status"])
            result = ToolResult(call.id, row["tool"], row["result"], status, parts=parts)
        calls.append(SavedCall(call, result, call.id in started, call.id in pending))
    return calls


# -- claiming -----------------------------------------------------------------------------


def claim(conn: sqlite3.Connection, saved: SavedRun, owner: str, pid: int, row: Row) -> bool:
    """Make ``owner`` the run's one owner if nobody changed the run since it was loaded
    (a compare-and-set in one transaction, with the ``resumed`` timeline row).

    Returns:
        Whether the claim took (``False``: another process claimed it first).
    """
    stored, old_pid, old_owner = saved.claim
    conn.execute("BEGIN IMMEDIATE")
    try:
        cursor = conn.execute(
            "UPDATE runs SET outcome = 'running', pid = ?, owner = ?, ended_at = NULL,"
            " error = NULL, error_type = NULL"
            " WHERE run_id = ? AND outcome = ? AND pid IS ? AND owner IS ?",
            (pid, owner, saved.run_id, stored, old_pid, old_owner),
        )
        if cursor.rowcount != 1:
            conn.execute("ROLLBACK")
            return False
        sql, params = row
        conn.execute(sql, tuple(p.encode(None) if isinstance(p, JsonValue) else p for p in params))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return True
