"""The audit log's writer thread never dies, never hangs a run, never fails one.

A row SQLite cannot bind (an integer beyond 64 bits, a lone surrogate), a value that
cannot even be turned into text, a commit that fails: each becomes the log's error
(a warning at the end of the run, or the strict log's error), flush waiters are
released, and later rows are written. The recorder waits for the writer off the event
loop, within a bound.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import time
import warnings
from pathlib import Path

import pytest

from toolwire import Agent, AuditLog, AuditLogError
from toolwire.cli import main
from toolwire.observe import AuditLogWarning
from toolwire.run.events import RunStarted
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .helpers import rows, search

HUGE = 2**64 + 5
SURROGATE = "half a pair: \ud800 (as a broken client sends it)"


class Unprintable:
    """A value whose ``str`` raises: nothing can bind it."""

    def __str__(self) -> str:
        raise RuntimeError("no text for this value")


def _run(log: AuditLog, prompt: str = "go", usage: int = 3) -> str:
    model = ScriptedModel(
        [
            tool_call_turn(("search", {"q": "a"}), usage={"prompt_tokens": usage, "completion_tokens": 1}),
            text_turn("fine"),
        ]
    )  # fmt: skip
    return Agent(model, [search], log=log).run_sync(prompt).run_id


def test_a_lone_surrogate_in_the_first_run_is_logged_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no AuditLogWarning either: it is written
        run_id = _run(AuditLog(path), prompt=SURROGATE)
    [(prompt,)] = rows(str(path), "SELECT prompt FROM runs WHERE run_id = ?", run_id)
    assert prompt == SURROGATE.replace("\ud800", "\ufffd")


def test_rows_sqlite_cannot_bind_do_not_stop_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    log = AuditLog(path)
    _run(log)  # the writer thread is running now
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = _run(log, prompt=SURROGATE, usage=HUGE)
    after = _run(log)
    assert log.flush(timeout=30)
    log.close()
    [(tokens, prompt)] = rows(
        str(path), "SELECT input_tokens, prompt FROM runs WHERE run_id = ?", huge
    )
    assert tokens == 2**63 - 1 and "\ufffd" in prompt  # clamped, replaced
    assert rows(str(path), "SELECT outcome FROM runs WHERE run_id = ?", after) == [("ok",)]


def test_an_unbindable_row_is_the_logs_error_and_flush_returns(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "runs.db").open()
    log.submit(("INSERT INTO runs (run_id) VALUES (?)", (Unprintable(),)))
    assert log.flush(timeout=30)  # released, not waiting forever
    assert isinstance(log.error, AuditLogError) and "no text for this value" in str(log.error)
    log.error = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_id = _run(log)  # the writer is alive: the next run is logged
    log.close()
    assert rows(str(tmp_path / "runs.db"), "SELECT outcome FROM runs WHERE run_id = ?", run_id) == [
        ("ok",)
    ]


def _failing_calls(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TRIGGER no_calls BEFORE INSERT ON calls BEGIN SELECT RAISE(FAIL, 'disk says no'); END"
    )
    conn.close()


def test_a_failed_commit_is_a_warning_unless_logging_is_strict(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    log = AuditLog(path)
    _run(log)
    _failing_calls(path)
    with pytest.warns(AuditLogWarning, match="disk says no"):
        _run(log)  # the run itself succeeds
    log.close()
    strict = AuditLog(path, strict=True)
    with pytest.raises(AuditLogError, match="disk says no"):
        _run(strict)
    strict.close()


def test_the_recorder_waits_for_the_writer_off_the_event_loop(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "runs.db").open()
    start = RunStarted("ab" * 16, "m", [], {}, [], time.time())
    recorder = log.begin(start)
    recorder._requests = 1  # type: ignore[attr-defined]  # a request went out already
    log._lock.acquire()  # the writer blocks on its next commit
    log.submit(("UPDATE runs SET rounds = 1 WHERE run_id = ?", (start.run_id,)), urgent=True)

    async def main() -> None:
        settle = asyncio.create_task(recorder.settle())  # type: ignore[attr-defined]
        ticks = 0
        while ticks < 3:  # the loop runs while the recorder waits for the writer
            await asyncio.sleep(0)
            ticks += 1
        assert not settle.done()
        log._lock.release()  # from the loop itself: the writer goes on
        await asyncio.wait_for(settle, 30)

    asyncio.run(main())
    log.close()
    assert rows(str(tmp_path / "runs.db"), "SELECT rounds FROM runs") == [(1,)]


def test_the_recorders_wait_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.observe import record

    monkeypatch.setattr(record, "SETTLE_TIMEOUT", 0.0)
    log = AuditLog(tmp_path / "runs.db").open()
    recorder = log.begin(RunStarted("cd" * 16, "m", [], {}, [], time.time()))
    recorder._requests = 1  # type: ignore[attr-defined]
    with log._lock:  # the writer cannot commit: the wait gives up at its bound
        log.submit(("UPDATE runs SET rounds = 2", ()), urgent=True)
        asyncio.run(recorder.settle())  # type: ignore[attr-defined]
    log.close()


# -- a damaged log (item 6) ----------------------------------------------------------------

DAMAGE = {
    "non-JSON tool calls": "UPDATE requests SET tool_calls = 'not json {'",
    "text timestamp": "UPDATE runs SET started_at = 'yesterday', ended_at = 'today'",
    "text latency": "UPDATE calls SET latency_ms = 'slow', started_at = 'then'",
    "missing table": "DROP TABLE calls",
    "non-JSON messages": "UPDATE requests SET messages = '[{'",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("command", ["log", "inspect", "inspect --json", "trace"])
def test_a_damaged_log_is_one_line_naming_the_file(
    tmp_path: Path, damage: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    _run(AuditLog(path))
    conn = sqlite3.connect(path)
    conn.execute(DAMAGE[damage])
    conn.commit()
    conn.close()
    words = command.split()
    if words[0] != "log":
        words.insert(1, "last")
    if words[0] == "trace":
        words += ["--html", str(tmp_path / "t.html")]
    code = main([*words, "--db", str(path)])  # never a traceback
    err = capsys.readouterr().err
    assert code in (0, 2)
    if code == 2:
        assert err.count("\n") == 1 and str(path) in err and "damaged" in err


# -- file modes (item 9) -------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_log_and_its_directory_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = tmp_path / "data" / "toolwire" / "runs.db"
        log = AuditLog(path)
        _run(log)
        files = {p.name: _mode(p) for p in path.parent.iterdir()}  # -wal, -shm exist now
        assert _mode(path.parent) == 0o700
        assert files == {"runs.db": 0o600, "runs.db-wal": 0o600, "runs.db-shm": 0o600}
        log.close()
        # A log made world-readable by an older toolwire is made private when opened.
        path.chmod(0o644)
        AuditLog(path).open().close()
        assert _mode(path) == 0o600
        page = tmp_path / "trace.html"
        page.write_text("old page")
        page.chmod(0o644)
        assert main(["trace", "last", "--db", str(path), "--html", str(page)]) == 0
        assert _mode(page) == 0o600
    finally:
        os.umask(old)


def test_strict_logging_is_an_explicit_cli_option(tmp_path: Path) -> None:
    from toolwire.cli import build_parser
    from toolwire.cli.logdb import log_target

    db = str(tmp_path / "runs.db")
    default = log_target(build_parser().parse_args(["run", "hi", "--log", db]))
    strict = log_target(build_parser().parse_args(["run", "hi", "--log", db, "--strict-log"]))
    assert (default.strict, strict.strict) == (False, True)
