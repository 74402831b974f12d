"""A run killed with SIGKILL loses at most the round in flight (a real subprocess)."""

from __future__ import annotations

import json
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
    import sys, threading
    from toolwire import Agent, AuditLog, tool
    from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

    @tool
    def quick(n: int) -> str:
        '''Answer at once.'''
        return f"quick {n}"

    @tool
    def stuck() -> str:
        '''Never return.'''
        print("stuck started", flush=True)
        threading.Event().wait()
        return "never"

    model = ScriptedModel([
        tool_call_turn(("quick", {"n": 1})),
        tool_call_turn(("quick", {"n": 2}), ("quick", {"n": 3})),
        tool_call_turn(("stuck", {})),
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
            # The event: the last round's call is running; the earlier rounds are done.
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
    ]
    requests = rows(str(db), "SELECT seq, round FROM requests ORDER BY seq")
    assert requests[:2] == [(1, 1), (2, 2)]  # the third (in flight) may or may not be there

    capsys.readouterr()
    assert main(["inspect", "last", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["outcome"] == "interrupted"
    assert report["tool_distribution"] == {"quick": 3}
