"""A run killed with SIGKILL mid-batch resumes from the log: one result per call, and a
side effect that may have happened is never run again (a real subprocess)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolwire import Agent, AuditLog, tool
from toolwire.cli import main
from toolwire.testing import ScriptedModel, text_turn

from .helpers import rows

SCRIPT = textwrap.dedent(
    """
    import os, sqlite3, sys, threading, time
    from toolwire import Agent, AuditLog, tool
    from toolwire.testing import ScriptedModel, tool_call_turn

    @tool(concurrency_safe=True, side_effects=False)
    def lookup(key: str) -> str:
        '''Answer at once.'''
        return f"value of {key}"

    @tool(concurrency_safe=True)
    def charge(amount: int) -> str:
        '''Charge a card (never returns here).'''
        os.write(1, b"charge started\\n")  # one write: print's text and newline are two
        threading.Event().wait()
        return "never"

    @tool(concurrency_safe=True, side_effects=False)
    def slow_read(path: str) -> str:
        '''Read slowly (never returns here, once lookup's result is in the file).'''
        seen = sqlite3.connect(sys.argv[1])
        while seen.execute("SELECT count(*) FROM calls").fetchone()[0] < 1:
            time.sleep(0.001)  # polls the file: the writer commits on its own
        os.write(1, b"read started\\n")
        threading.Event().wait()
        return "never"

    model = ScriptedModel([
        tool_call_turn(("lookup", {"key": "k"}, "c1"), ("charge", {"amount": 5}, "c2"),
                       ("slow_read", {"path": "p"}, "c3")),
    ])
    Agent(model, [lookup, charge, slow_read], log=AuditLog(sys.argv[1])).run_sync("pay")
    """
)

CALLED: list[str] = []


@tool(concurrency_safe=True, side_effects=False)
def lookup(key: str) -> str:
    """Answer at once."""
    CALLED.append("lookup")
    return f"value of {key}"


@tool(concurrency_safe=True)
def charge(amount: int) -> str:
    """Charge a card."""
    CALLED.append("charge")
    return "charged"


@tool(concurrency_safe=True, side_effects=False)
def slow_read(path: str) -> str:
    """Read."""
    CALLED.append("slow_read")
    return f"text of {path}"


def _kill_mid_batch(db: Path, script: Path) -> None:
    script.write_text(SCRIPT)
    with subprocess.Popen([sys.executable, str(script), str(db)], stdout=subprocess.PIPE) as proc:
        try:
            assert proc.stdout is not None
            out = b""
            while out.count(b"\n") < 2:  # the events: both slow calls are running
                # The pipe's bytes, unbuffered: both lines may come in one read.
                ready, _, _ = select.select([proc.stdout], [], [], 60)
                assert ready, f"the slow calls did not both start (saw {out!r})"
                chunk = os.read(proc.stdout.fileno(), 1024)
                assert chunk, f"the agent process ended early (exit {proc.wait()}, saw {out!r})"
                out += chunk
            assert sorted(out.decode().splitlines()) == ["charge started", "read started"]
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def test_a_killed_run_resumes_with_one_result_per_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.db"
    _kill_mid_batch(db, tmp_path / "agent.py")
    # What the log knows: lookup's result; charge's start (committed before it ran).
    assert rows(str(db), "SELECT call_id, status FROM calls") == [("c1", "ok")]
    assert rows(str(db), "SELECT kind, call_id FROM timeline") == [("call_started", "c2")]
    assert AuditLog(db).inspect("last")["outcome"] == "interrupted"

    model = ScriptedModel([text_turn("charged? I will check before trying again")])
    agent = Agent(model, [lookup, charge, slow_read], log=AuditLog(db))
    result = agent.resume_sync("last")

    # lookup's result is in the log: not run again; charge may have taken effect: not
    # run again, answered interrupted; the read is harmless: run again.
    assert CALLED == ["slow_read"]
    sent = {m["tool_call_id"]: m["content"] for m in model.requests[0]["messages"]
            if m["role"] == "tool"}  # fmt: skip
    assert list(sent) == ["c1", "c2", "c3"]
    assert sent["c1"] == "value of k" and sent["c3"] == "text of p"
    assert "interrupted" in sent["c2"] and "whether it took effect is unknown" in sent["c2"]
    assert result.output.startswith("charged?")

    calls = rows(str(db), "SELECT call_id, status FROM calls ORDER BY call_id")
    assert calls == [("c1", "ok"), ("c2", "interrupted"), ("c3", "ok")]  # exactly one each
    capsys.readouterr()
    assert main(["inspect", "last", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["outcome"] == "ok" and report["run_id"] == result.run_id
    assert {c["call_id"]: c["status"] for c in report["calls"]}["c2"] == "interrupted"
    [resumed] = [e for e in report["timeline"] if e["kind"] == "resumed"]
    assert resumed["from"] == "interrupted"
    assert main(["inspect", "last", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "charge" in text and "interrupted" in text and "resumed" in text


OWNER_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys, threading
    from pathlib import Path
    from toolwire import Agent, AuditLog, Permissions, tool
    from toolwire.run.model import TurnDone

    @tool
    def delete(path: str) -> str:
        '''Delete a file.'''
        Path(path).with_suffix(".deleted." + sys.argv[2]).write_text("x")
        return f"deleted {path}"

    class Stuck:
        name = "stuck"

        def stream(self, request):
            return self._play()

        async def _play(self):
            print("asked", flush=True)
            await asyncio.to_thread(threading.Event().wait)
            yield TurnDone(None)

    agent = Agent(Stuck(), [delete], permissions=Permissions(ask=["delete"]),
                  approve="pause", log=AuditLog(sys.argv[1]))
    agent.resume_sync("last", {"d1": True})
    """
)


@tool
def delete(path: str) -> str:
    """Delete a file."""
    (Path(path).with_suffix(".deleted.here")).write_text("x")
    return f"deleted {path}"


def test_a_second_process_cannot_resume_a_run_another_owns(tmp_path: Path) -> None:
    from toolwire import Permissions
    from toolwire.errors import RunClaimedError
    from toolwire.testing import tool_call_turn

    db = tmp_path / "runs.db"
    target = str(tmp_path / "victim")
    ask = {"permissions": Permissions(ask=["delete"]), "approve": "pause"}
    first = Agent(ScriptedModel([tool_call_turn(("delete", {"path": target}, "d1"))]),
                  [delete], log=AuditLog(db), **ask)  # fmt: skip
    assert first.run_sync("delete it").paused
    script = tmp_path / "owner.py"
    script.write_text(OWNER_SCRIPT)
    with subprocess.Popen(
        [sys.executable, str(script), str(db), "there"], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready and proc.stdout.readline().strip() == "asked"
            # The other process owns the run (it ran the approved call, and waits for
            # its model): this one is refused, and runs nothing.
            second = Agent(ScriptedModel([]), [delete], log=AuditLog(db), **ask)
            with pytest.raises(RunClaimedError, match=f"process {proc.pid} is alive"):
                second.resume_sync("last", {"d1": True})
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
    assert sorted(p.name for p in tmp_path.glob("victim.*")) == ["victim.deleted.there"]
    # Its process is gone: the run resumes here, and the call it ran is not run again.
    third = Agent(ScriptedModel([text_turn("deleted")]), [delete], log=AuditLog(db), **ask)
    assert third.resume_sync("last").output == "deleted"
    assert sorted(p.name for p in tmp_path.glob("victim.*")) == ["victim.deleted.there"]
    resumes = [e for e in AuditLog(db).inspect("last")["timeline"] if e["kind"] == "resumed"]
    assert [e["from"] for e in resumes] == ["paused", "interrupted"]
