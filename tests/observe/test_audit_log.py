"""The audit log: what a run leaves behind, the schema and its migrations, redaction."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from toolwire import Agent, AuditLog, ContextPolicy, RunNotFoundError
from toolwire.observe import Redactor
from toolwire.observe.schema import MIGRATIONS, SCHEMA_VERSION, apply_migrations
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .helpers import CorrectingModel, dump, rows, search, write


def _tables(conn: sqlite3.Connection) -> dict[str, list[str]]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {n: sorted(c[1] for c in conn.execute(f"PRAGMA table_info({n})")) for n in sorted(names)}


def test_schema_from_an_empty_database(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    AuditLog(path).open().close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = _tables(conn)
    assert set(tables) == {
        "runs",
        "requests",
        "calls",
        "progress",
        "timeline",
        "images",
        "proxied",
        "notices",
    }
    assert tables["notices"] == ["idx", "kind", "message", "request", "run_id", "seq"]
    assert tables["images"] == ["data", "media_type", "sha256"]
    assert {"pid", "cache_read_tokens", "outcome", "tools"} <= set(tables["runs"])
    assert {"early", "repaired", "latency_ms", "attempts", "reason", "parts"} <= set(
        tables["calls"]
    )
    conn.close()  # Python 3.13 warns of an unclosed connection (and warnings are errors)


def test_a_database_made_by_the_first_schema_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=1)
    conn.execute(
        "INSERT INTO runs (run_id, started_at, model, tools, settings, outcome)"
        " VALUES ('0123abcd', 1.0, 'old-model', '[]', '{}', 'ok')"
    )
    conn.close()
    fresh = tmp_path / "fresh.db"
    AuditLog(fresh).open().close()

    log = AuditLog(path)
    assert [r["run_id"] for r in log.runs()] == ["0123abcd"]  # reading migrates it first
    log.open()
    log.close()
    migrated, built = sqlite3.connect(path), sqlite3.connect(fresh)
    assert _tables(migrated) == _tables(built)
    assert migrated.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert migrated.execute("SELECT model, pid FROM runs").fetchall() == [("old-model", None)]
    migrated.close()
    built.close()


def test_a_run_records_requests_and_calls(tmp_path: Path) -> None:
    path = str(tmp_path / "runs.db")
    model = ScriptedModel(
        [
            tool_call_turn(
                ("search", {"q": "a"}),
                ("search", {"q": "b"}),
                ("write", {"path": "x"}),
                ("search", '{"q": "c",}'),  # repaired: the trailing comma
                fragment=3,
                usage={"prompt_tokens": 12, "completion_tokens": 7},
            ),
            text_turn("Done.", usage={"prompt_tokens": 30, "completion_tokens": 2}),
        ]
    )
    result = Agent(model, [search, write], log=path, settings={"temperature": 0}).run_sync("go")
    assert len(result.run_id) == 32

    [run] = rows(path, "SELECT run_id, model, outcome, rounds, requests, input_tokens,"
                 " output_tokens, output, prompt, settings, tools, ended_at >= started_at FROM runs")  # fmt: skip
    assert run[:9] == (result.run_id, "scripted", "ok", 1, 2, 42, 9, "Done.", "go")
    assert json.loads(run[9])["provider"] == {"temperature": 0}
    assert [t["function"]["name"] for t in json.loads(run[10])] == ["search", "write"]
    assert run[11] == 1

    requests = rows(path, "SELECT seq, round, finish_reason, tool_calls, input_tokens, messages,"
                    " latency_ms >= 0, history_length FROM requests ORDER BY seq")  # fmt: skip
    assert [(r[0], r[1], r[2], r[4]) for r in requests] == [
        (1, 1, "tool_calls", 12),
        (2, 2, "stop", 30),
    ]
    sent = json.loads(requests[0][3])
    assert [c["arguments"] for c in sent] == [
        '{"q": "a"}',
        '{"q": "b"}',
        '{"path": "x"}',
        '{"q": "c",}',
    ]
    assert [m["role"] for m in json.loads(requests[0][5])] == ["user"]
    # The second request adds the assistant turn and its four results.
    assert [m["role"] for m in json.loads(requests[1][5])] == ["assistant"] + ["tool"] * 4
    assert requests[1][7] == 6

    calls = rows(path, "SELECT round, idx, tool, arguments, status, repaired, early, attempts,"
                 " failure_class, latency_ms IS NOT NULL, result FROM calls ORDER BY idx")  # fmt: skip
    assert [c[:9] for c in calls] == [
        (1, 0, "search", '{"q": "a"}', "ok", 0, 1, 1, None),
        (1, 1, "search", '{"q": "b"}', "ok", 0, 1, 1, None),
        (1, 2, "write", '{"path": "x"}', "error", 0, 0, 1, "tool_error"),
        (1, 3, "search", '{"q": "c",}', "ok", 1, 0, 1, None),
    ]
    assert all(c[9] for c in calls)
    assert calls[0][10] == "found a" and "disk full" in calls[2][10]


def test_the_log_keeps_the_full_result_the_model_saw_cut(tmp_path: Path) -> None:
    path = str(tmp_path / "runs.db")
    model = ScriptedModel([tool_call_turn(("dump", {"size": 5000})), text_turn("ok")])
    agent = Agent(model, [dump], log=path, context=ContextPolicy(max_result_tokens=50))
    result = agent.run_sync("go")
    seen = next(m for m in result.messages if getattr(m, "role", "") == "tool").content
    assert "cut from the middle" in seen and len(seen) < 1000
    [(logged,)] = rows(path, "SELECT result FROM calls")
    assert logged == "x" * 5000


def test_discarded_early_calls_are_logged_with_their_status(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "runs.db")
    result = Agent(CorrectingModel(), [search], log=log).run_sync("go")
    assert [d.call_id for d in result.discarded] == ["c1"]
    report = log.inspect(result.run_id)
    assert [(c["arguments"], c["status"], c["early"]) for c in report["calls"]] == [
        ('{"q": "draft"}', "discarded", True),
        ('{"q": "final"}', "ok", False),
    ]
    assert "differ" in report["calls"][0]["reason"]
    assert report["tool_distribution"] == {"search": 1}


def test_a_failed_run_is_logged_with_its_error(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "runs.db")
    model = ScriptedModel([tool_call_turn(("search", {"q": "a"}))])  # no second turn scripted
    with pytest.raises(Exception, match="ran out of turns"):
        Agent(model, [search], log=log).run_sync("go")
    [run] = log.runs()
    assert run["outcome"] == "error" and run["calls"] == 1
    report = log.inspect("last")
    assert report["error_type"] == "CallerError" and "ran out of turns" in report["error"]


def test_run_id_is_set_without_a_log_and_differs_per_run() -> None:
    agent = Agent(ScriptedModel([text_turn("a"), text_turn("b")]), [])
    first, second = agent.run_sync("x"), agent.run_sync("y")
    assert len(first.run_id) == 32 and first.run_id != second.run_id


def test_memory_log_serves_many_runs(tmp_path: Path) -> None:
    log = AuditLog(":memory:")
    agent = Agent(ScriptedModel([text_turn("a"), text_turn("b")]), [], log=log)
    ids = [agent.run_sync("x").run_id, agent.run_sync("y").run_id]
    assert [r["run_id"] for r in log.runs()] == ids[::-1]
    assert log.resolve(ids[0][:6]) == ids[0]
    assert log.resolve("last") == ids[1]
    log.close()


def test_unknown_run_id_lists_the_latest_ids(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "runs.db")
    agent = Agent(ScriptedModel([text_turn("a"), text_turn("b")]), [], log=log)
    ids = [agent.run_sync("x").run_id for _ in range(2)]
    with pytest.raises(RunNotFoundError) as caught:
        log.inspect("ffff0000")
    message = str(caught.value)
    assert "\n" not in message and "no run 'ffff0000'" in message
    assert ids[1] in message and ids[0] in message
    assert message.index(ids[1]) < message.index(ids[0])  # newest first
    assert caught.value.latest == ids[::-1]


# -- redaction ---------------------------------------------------------------------------------


def test_redactor_patterns_and_names() -> None:
    redact = Redactor(patterns=[r"acct-\d{6}"], names=["pin"])
    text = (
        '{"api_key": "sk-proj-abcdefghijklmnop1234", "pin": "1234", "q": "acct-123456",'
        ' "note": "Authorization: Bearer abc.def.ghi-123456", "password": "hunter2"}'
    )
    out = redact(text)
    for secret in ("sk-proj", '1234"', "acct-123456", "abc.def", "hunter2"):
        assert secret not in out, secret
    assert json.loads(out)["q"] == "[REDACTED]" and '"pin": "[REDACTED]"' in out
    assert redact("nothing secret here") == "nothing secret here"
    # Broken JSON (as a model may send it) is redacted too.
    assert "hunter2" not in redact('{"password": "hunter2", ')
    assert redact("url?token=abc123&x=1") == "url?token=[REDACTED]&x=1"


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    secret = "sk-ant-api03-SECRETSECRETSECRET"
    model = ScriptedModel(
        [tool_call_turn(("search", {"q": f"key {secret}"})), text_turn(f"use {secret}")]
    )
    log = AuditLog(path, redact=Redactor(names=["q"]))
    Agent(model, [search], log=log, system=f"internal key {secret}").run_sync(f"my key is {secret}")
    log.close()
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"SECRETSECRET" not in data
    assert b"[REDACTED]" in data
