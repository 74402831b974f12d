"""Call outcomes and run outcomes as the audit log, ``toolwire log`` and replay read them."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, AuditLog, tool
from toolwire.cli import main
from toolwire.messages import ToolResult, ToolStatus
from toolwire.observe.replay import ReplayModel, assert_replays
from toolwire.observe.schema import apply_migrations
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .helpers import search


def _log_json(capsys: pytest.CaptureFixture[str], path: Path) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["log", "--db", str(path), "--json"]) == 0
    runs: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return runs


def _cut(turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn, its last chunk saying it was cut at the token limit."""
    turn[-1]["choices"][0]["finish_reason"] = "length"
    return turn


def test_a_log_written_before_denied_calls_had_a_class_counts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=3)
    conn.execute(
        "INSERT INTO runs (run_id, started_at, model, tools, settings, outcome)"
        " VALUES ('0123abcd', 1.0, 'old-model', '[]', '{}', 'ok')"
    )
    conn.execute(
        "INSERT INTO calls (run_id, seq, round, idx, call_id, tool, arguments, repaired,"
        " status, result, ended_at, attempts, early)"
        " VALUES ('0123abcd', 1, 1, 0, 'c1', 'write', '{}', 0, 'denied', 'no', 2.0, 0, 0)"
    )
    conn.close()
    [listed] = _log_json(capsys, path)  # reading migrates the file first
    assert (listed["calls"], listed["failures"]) == (1, 1)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT failure_class FROM calls").fetchall() == [("denied",)]
    conn.close()


def test_a_turn_cut_at_the_token_limit_ends_the_run_with_outcome_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    model = ScriptedModel([_cut(text_turn("The answer is")), text_turn("never asked")])
    result = Agent(model, [search], log=path).run_sync("go")
    assert (result.truncated, result.outcome, result.output) == (True, "length", "The answer is")
    assert result.requests == 1
    [listed] = _log_json(capsys, path)
    assert listed["outcome"] == "length"


def test_a_cut_turn_with_calls_answers_them_and_ends() -> None:
    model = ScriptedModel([_cut(tool_call_turn(("search", {"q": "a"}))), text_turn("no")])
    result = Agent(model, [search]).run_sync("go")
    assert result.truncated and result.requests == 1
    [answer] = [m for m in result.messages if isinstance(m, ToolResult)]
    assert (answer.status, answer.content) == (ToolStatus.OK, "found a")


def test_an_uncut_run_is_not_truncated() -> None:
    result = Agent(ScriptedModel([text_turn("done")]), []).run_sync("go")
    assert (result.truncated, result.outcome) == (False, "ok")


@tool(timeout=0.01)
async def slow(n: int) -> str:
    """Wait for ever (times out)."""
    await asyncio.Event().wait()
    return str(n)


@tool
def odd(text: str) -> str:
    """Raise an exception whose text looks like more than one reason."""
    raise ValueError(f"{text}: not: a: reason\nCorrect the call and try again")


def test_replayed_failures_keep_their_text_and_status_word_for_word(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    model = ScriptedModel(
        [
            tool_call_turn(("slow", {"n": 1}), ("odd", {"text": "x"}), ("search", {"q": "a"})),
            text_turn("done"),
        ]
    )
    logged = Agent(model, [slow, odd, search], log=path).run_sync("go")
    before = [m for m in logged.messages if isinstance(m, ToolResult)]
    assert [r.status for r in before] == [ToolStatus.TIMEOUT, ToolStatus.ERROR, ToolStatus.OK]
    replayed = assert_replays(path)  # statuses and failure classes compared
    after = [m for m in replayed.messages if isinstance(m, ToolResult)]
    assert [(r.status, r.content) for r in after] == [(r.status, r.content) for r in before]
    replay = ReplayModel.from_log(path, "last")
    assert [c["failure_class"] for c in replay.run["calls"]] == ["timeout", "tool_error", None]


def test_log_counts_what_the_audit_log_calls_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    model = ScriptedModel([tool_call_turn(("odd", {"text": "x"}), ("nope", {})), text_turn("ok")])
    Agent(model, [odd], log=path).run_sync("go")
    [listed] = _log_json(capsys, path)
    assert listed["failures"] == 2
    with AuditLog(path) as log:
        assert log.runs()[0]["failures"] == 2
