"""A run's notices in the audit log: one row each, under the request they concern, in
the order the run heard them; ``toolwire inspect`` and ``toolwire log`` show them, and
a log written before they were kept still reads (and is migrated)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, AuditLog, Permissions, ProviderAPIError, tool
from toolwire.cli import main
from toolwire.observe.schema import SCHEMA_VERSION, apply_migrations
from toolwire.observe.trace import render_html
from toolwire.providers.http import Retries
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.testing import ScriptedModel, assert_replays, text_turn, tool_call_turn

from ..providers.faultserver import FaultServer, json_reply, status
from .helpers import rows, search


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}


def _call(arguments: str) -> dict[str, Any]:
    """A fragment of call ``c1`` that sends its name again (``name_repeated``)."""
    function = {"name": "search", "arguments": arguments}
    return {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": function}]}


# A call whose second fragment re-sends its name (a notice streamed to the caller),
# ended with finish reason "stop" (a notice only the finished turn carries).
NOTICED_CALL = [
    _chunk({"role": "assistant", "content": None}),
    _chunk(_call('{"q": ')),
    _chunk(_call('"a"}')),
    _chunk({}, "stop"),
]
# An answer that is a call written as text: the agent's notice, after the turn ended.
CALL_AS_TEXT = '{"name": "search", "arguments": {"q": "b"}}'


def _noticed_run(path: str) -> str:
    model = ScriptedModel([NOTICED_CALL, text_turn(CALL_AS_TEXT)])
    result = Agent(model, [search], log=path).run_sync("find a")
    assert result.output == CALL_AS_TEXT
    return result.run_id


def test_each_requests_notices_are_logged_in_the_order_heard(tmp_path: Path) -> None:
    path = str(tmp_path / "runs.db")
    run_id = _noticed_run(path)
    logged = rows(
        path,
        "SELECT request, seq, kind, idx FROM notices WHERE run_id = ? ORDER BY request, seq",
        run_id,
    )
    assert logged == [
        (1, 1, "name_repeated", 0),  # streamed: once, though the turn carries it too
        (1, 2, "finish_reason_mismatch", None),  # found as the turn was finished
        (2, 1, "call_shaped_text", None),  # added by the agent after the turn
    ]
    [(message,)] = rows(path, "SELECT message FROM notices WHERE kind = 'call_shaped_text'")
    assert "was not read as a call" in message


def test_inspect_and_log_show_the_notices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "runs.db")
    _noticed_run(path)
    capsys.readouterr()
    assert main(["inspect", "last", "--db", path]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("round 1:")))
    second = lines.index(next(line for line in lines if line.startswith("round 2:")))
    assert lines[first + 1].startswith("  notice name_repeated [0]: tool call c1 re-sent")
    assert lines[first + 2].startswith("  notice finish_reason_mismatch: the turn has 1 tool")
    assert lines[second + 1].startswith("  notice call_shaped_text: the model wrote")

    assert main(["inspect", "last", "--db", path, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [[n["kind"] for n in q["notices"]] for q in report["requests"]] == [
        ["name_repeated", "finish_reason_mismatch"],
        ["call_shaped_text"],
    ]
    assert report["requests"][0]["notices"][0]["index"] == 0

    assert main(["log", "--db", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["notices"] == 3
    assert main(["log", "--db", path]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[-2:] == ["notices", "outcome"] and row.split()[-2:] == ["3", "ok"]


def test_the_trace_page_lists_a_requests_notices_in_its_details(tmp_path: Path) -> None:
    path = str(tmp_path / "runs.db")
    _noticed_run(path)
    with AuditLog(path) as log, log.reading() as conn:
        from toolwire.observe.query import load_run

        page = render_html(load_run(conn, "last", path))
    assert "call_shaped_text: the model wrote" in page
    assert "name_repeated (call 0): tool call c1 re-sent" in page


def test_a_retry_is_a_notice_of_its_request_answered_or_failed(tmp_path: Path) -> None:
    path = str(tmp_path / "runs.db")
    busy = status(503, {"error": {"message": "overloaded, sk-proj-SECRETSECRETSECRET1234"}})
    answer = {
        "id": "c",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                     "finish_reason": "stop"}],
    }  # fmt: skip
    retries = Retries(attempts=1, base_delay=0.0, max_delay=0.0)
    with FaultServer(busy, json_reply(answer)) as server:
        model = OpenAIChatModel("m", base_url=server.url, api_key="k", retries=retries)
        assert Agent(model, [], log=path).run_sync("hello").output == "hi"
    with FaultServer(busy) as server, pytest.raises(ProviderAPIError):
        model = OpenAIChatModel("m", base_url=server.url, api_key="k", retries=retries)
        Agent(model, [], log=path).run_sync("hello")
    logged = rows(
        path,
        "SELECT r.outcome, n.request, n.seq, n.kind, n.message FROM notices n"
        " JOIN runs r USING (run_id) ORDER BY r.started_at, n.request, n.seq",
    )
    assert [row[:4] for row in logged] == [("ok", 1, 1, "retry"), ("error", 1, 1, "retry")]
    assert all("HTTP 503" in row[4] and "SECRET" not in row[4] for row in logged)
    [(error,)] = rows(path, "SELECT error_type FROM requests WHERE error IS NOT NULL")
    assert error == "ProviderAPIError"  # the failed request's row holds its retry's notice


def test_a_replay_logs_the_notices_of_what_it_replays(tmp_path: Path) -> None:
    """The logged turn is replayed, not the stream's quirks: the name sent twice is not
    sent again, the finish reason and the answer's text are."""
    path = str(tmp_path / "runs.db")
    _noticed_run(path)
    replayed = assert_replays(path, log=str(tmp_path / "replayed.db"))
    assert replayed.output == CALL_AS_TEXT
    query = "SELECT request, seq, kind FROM notices ORDER BY request, seq"
    assert rows(str(tmp_path / "replayed.db"), query) == [
        (1, 1, "finish_reason_mismatch"),
        (2, 1, "call_shaped_text"),
    ]


def test_a_log_from_before_notices_reads_and_is_migrated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=11)
    conn.execute(
        "INSERT INTO runs (run_id, started_at, ended_at, model, tools, settings, outcome)"
        " VALUES ('0123abcd', 1.0, 2.0, 'old-model', '[]', '{}', 'ok')"
    )
    conn.execute(
        "INSERT INTO requests (run_id, seq, round, started_at, ended_at, latency_ms, messages,"
        " history_length, text, reasoning, tool_calls, input_tokens, output_tokens)"
        " VALUES ('0123abcd', 1, 1, 1.0, 2.0, 1000.0, '[]', 1, 'old answer', '', '[]', 3, 2)"
    )
    conn.close()
    capsys.readouterr()
    assert main(["inspect", "0123", "--db", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [q["notices"] for q in report["requests"]] == [[]]
    assert main(["log", "--db", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["notices"] == 0
    migrated = sqlite3.connect(path)
    assert migrated.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert migrated.execute("SELECT COUNT(*) FROM notices").fetchone()[0] == 0
    migrated.close()


@tool(side_effects=False)
def survey(area: str) -> Iterator[str]:
    """Surveys an area, reporting as it goes."""
    yield f"walking {area}"
    yield f"{area} surveyed"


@tool
def build(area: str) -> Iterator[str]:
    """Builds on an area (asks first), reporting as it goes."""
    yield f"digging {area}"
    yield f"built on {area}"


def test_a_resumed_run_numbers_its_rows_after_the_logged_ones(tmp_path: Path) -> None:
    """Progress and notices go on from the log's numbers (a repeat of the key would
    lose the resumed run's rows)."""
    path = str(tmp_path / "runs.db")
    ask = Permissions(ask=["build"])
    first = ScriptedModel(
        [tool_call_turn(("survey", {"area": "north"}), ("build", {"area": "north"}))]
    )
    paused = Agent(first, [survey, build], permissions=ask, approve="pause", log=path).run_sync(
        "build north"
    )
    assert paused.paused
    model = ScriptedModel([text_turn(CALL_AS_TEXT)])
    with AuditLog(path, strict=True) as log:
        agent = Agent(model, [survey, build], permissions=ask, approve="pause", log=log)
        resumed = agent.resume_sync(paused.run_id, {paused.pending[0].call_id: True})
    assert resumed.output == CALL_AS_TEXT
    assert rows(path, "SELECT seq, tool, value FROM progress ORDER BY seq") == [
        (1, "survey", "walking north"),
        (2, "build", "digging north"),
    ]
    assert rows(path, "SELECT request, seq, kind FROM notices") == [(2, 1, "call_shaped_text")]
