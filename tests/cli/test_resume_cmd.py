"""``toolwire resume``: a run that ``toolwire run --pause`` paused goes on from the log,
asking at the terminal; over a loopback OpenAI-compatible server."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from toolwire.cli import main
from toolwire.testing import text_turn, tool_call_turn

from ..providers.faultserver import FaultServer, sse

TOOLS = '''
from toolwire import tool

@tool
def delete(path: str) -> str:
    """Delete a file."""
    with open(path + ".deleted", "w") as marker:
        marker.write("deleted")
    return f"deleted {path}"

TOOLS = [delete]
'''


def _stream(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


class _Terminal(io.StringIO):
    """Typed answers, from what looks like a terminal."""

    def isatty(self) -> bool:
        return True


def _paused_run(tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]) -> Path:
    tools = tmp_path / "mytools.py"
    tools.write_text(TOOLS)
    db = tmp_path / "runs.db"
    code = main(
        ["run", "delete it", "-m", "openai:m", "--base-url", f"{server.url}/v1",
         "--tools", f"{tools}:TOOLS", "--pause", "--log", str(db)]
    )  # fmt: skip
    assert code == 0
    assert "(paused) waiting for approval of delete (d1)" in capsys.readouterr().out
    return db


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    target = str(tmp_path / "victim")
    with FaultServer(
        sse(_stream(tool_call_turn(("delete", {"path": target}, "d1")))),
        sse(_stream(text_turn("done deleting"))),
    ) as s:
        yield s


def test_resume_asks_at_the_terminal_and_goes_on_with_the_recorded_model_and_tools(
    tmp_path: Path,
    server: FaultServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = _paused_run(tmp_path, server, capsys)
    assert not (tmp_path / "victim.deleted").exists()
    monkeypatch.setattr("sys.stdin", _Terminal("y\n"))
    assert main(["resume", "last", "--db", str(db)]) == 0
    captured = capsys.readouterr()
    assert "allow delete" in captured.err and "done deleting" in captured.out
    assert (tmp_path / "victim.deleted").exists()
    sent = server.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[2]["content"].startswith("deleted ")
    assert main(["inspect", "last", "--db", str(db)]) == 0
    report = capsys.readouterr().out
    assert "approved by terminal:" in report and "resumed" in report


def test_a_tool_that_cannot_be_loaded_has_its_pending_call_denied(
    tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _paused_run(tmp_path, server, capsys)
    (tmp_path / "mytools.py").unlink()
    assert main(["resume", "last", "--db", str(db)]) == 0
    captured = capsys.readouterr()
    assert "cannot load --tools" in captured.err and "done deleting" in captured.out
    sent = server.requests[1].body["messages"]
    assert "`delete` is no longer available" in sent[2]["content"]
    assert not (tmp_path / "victim.deleted").exists()


def test_resuming_a_finished_run_is_one_line_and_exit_2(
    tmp_path: Path, server: FaultServer, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    db = _paused_run(tmp_path, server, capsys)
    monkeypatch.setattr("sys.stdin", _Terminal("no\n"))
    assert main(["resume", "last", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["resume", "last", "--db", str(db)]) == 2
    assert "cannot be resumed: it ended with outcome 'ok'" in capsys.readouterr().err
