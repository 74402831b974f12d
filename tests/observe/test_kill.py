"""A run killed with SIGKILL loses at most the calls in flight (a real subprocess)."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolwire.cli import main

from .helpers import rows

SCRIPT = textwrap.dedent(
    """
    import sqlite3, sys, threading, time
    import toolwire.observe.store
    from toolwire import Agent, AuditLog, tool
    from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

    # A finished call must not wait for company: with an endless group window, only
    # an urgent commit puts quick 4 in the file while stuck runs.
    toolwire.observe.store.GROUP_WINDOW = 3600.0

    @tool
    def quick(n: int) -> str:
        '''Answer at once.'''
        return f"quick {n}"

    @tool
    def stuck() -> str:
        '''Never return (once the call before is in the file: nothing flushes it).'''
        seen = sqlite3.connect(sys.argv[1])
        while seen.execute("SELECT count(*) FROM calls").fetchone()[0] < 4:
            time.sleep(0.001)  # polls the file: the writer commits on its own
        print("stuck started", flush=True)
        threading.Event().wait()
        return "never"

    model = ScriptedModel([
        tool_call_turn(("quick", {"n": 1})),
        tool_call_turn(("quick", {"n": 2}), ("quick", {"n": 3})),
        tool_call_turn(("quick", {"n": 4}), ("stuck", {})),  # one after the other
        text_turn("never"),
    ])
    Agent(model, [quick, stuck], log=AuditLog(sys.argv[1])).run_sync("go")
    """
)


def test_sigkill_loses_at_most_the_calls_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.db"
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT)
    with subprocess.Popen(
        [sys.executable, str(script), str(db)], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            # The event: the last round's second call is running; its first call ended
            # just before (nothing waited for its row to be written), and the earlier
            # rounds are done.
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "quick 4's row was not committed while the next call ran"
            assert proc.stdout.readline().strip() == "stuck started"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    assert rows(str(db), "PRAGMA integrity_check") == [("ok",)]
    calls = rows(str(db), "SELECT round, tool, arguments, status, result FROM calls ORDER BY seq")
    assert calls == [
        (1, "quick", '{"n": 1}', "ok", "quick 1"),
        (2, "quick", '{"n": 2}', "ok", "quick 2"),
        (2, "quick", '{"n": 3}', "ok", "quick 3"),
        (3, "quick", '{"n": 4}', "ok", "quick 4"),
    ]
    requests = rows(str(db), "SELECT seq, round FROM requests ORDER BY seq")
    assert requests[:2] == [(1, 1), (2, 2)]  # the third (in flight) may or may not be there

    capsys.readouterr()
    assert main(["inspect", "last", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["outcome"] == "interrupted"
    assert report["tool_distribution"] == {"quick": 4}
