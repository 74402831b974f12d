"""``toolwire log``, ``inspect`` and ``trace``, and ``toolwire run``'s default log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, AuditLog
from toolwire.cli import main
from toolwire.demo import recorded_stream
from toolwire.observe.paths import default_log_path
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from ..providers.faultserver import FaultServer, sse
from .helpers import CorrectingModel, search, write

CALL_FIELDS = {
    "round",
    "call_id",
    "tool",
    "arguments",
    "status",
    "latency_ms",
    "result_preview",
    "early",
}


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A log with three runs: calls with a failure and a loop; a discarded call; an answer."""
    path = str(tmp_path / "runs.db")
    looping = ScriptedModel(
        [
            tool_call_turn(
                ("search", {"q": "same"}),
                ("search", {"q": "same"}),
                ("search", {"q": "same"}),
                ("write", {"path": "out.txt"}),
                ("nope", {}),
                usage={"prompt_tokens": 100, "completion_tokens": 20},
            ),
            tool_call_turn(
                ("search", {"q": "other"}), usage={"prompt_tokens": 150, "completion_tokens": 10}
            ),
            text_turn("done", usage={"prompt_tokens": 200, "completion_tokens": 5}),
        ]
    )
    Agent(looping, [search, write], log=path).run_sync("loop")
    Agent(CorrectingModel(), [search], log=path).run_sync("correct")
    Agent(ScriptedModel([text_turn("hello")]), [], log=path).run_sync("plain")
    return path


def test_log_lists_runs_newest_first(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    runs = _json(capsys, "log", "--db", db, "--json")
    assert [r["prompt"] for r in runs] == ["plain", "correct", "loop"]
    assert all(len(r["run_id"]) == 32 for r in runs)
    assert [(r["rounds"], r["calls"], r["failures"], r["outcome"]) for r in runs] == [
        (0, 0, 0, "ok"),
        (1, 1, 0, "ok"),
        (2, 6, 2, "ok"),
    ]
    assert runs[2]["model"] == "scripted" and runs[0]["time"]
    assert _json(capsys, "log", "--log", db, "--json", "--limit", "1") == runs[:1]
    capsys.readouterr()
    assert main(["log", "--db", db]) == 0
    text = capsys.readouterr().out
    assert runs[0]["run_id"][:12] in text and "outcome" in text


def test_inspect_json(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    loop_run = _json(capsys, "log", "--db", db, "--json")[2]["run_id"]
    report = _json(capsys, "inspect", loop_run[:8], "--db", db, "--json")
    assert report["run_id"] == loop_run and report["rounds"] == 2
    calls = report["calls"]
    assert all(set(c) >= CALL_FIELDS for c in calls)
    assert [(c["round"], c["tool"], c["status"]) for c in calls] == [
        (1, "search", "ok"),
        (1, "search", "ok"),
        (1, "search", "ok"),
        (1, "write", "error"),
        (1, "nope", "error"),
        (2, "search", "ok"),
    ]
    assert calls[0]["arguments"] == '{"q": "same"}'
    assert all(isinstance(c["latency_ms"], float) and c["latency_ms"] >= 0 for c in calls)
    assert calls[4]["latency_ms"] == 0.0 and calls[4]["attempts"] == 0  # never ran
    assert calls[0]["latency_ms"] > 0 and calls[0]["attempts"] == 1
    assert calls[0]["result_preview"].startswith("found same")
    assert calls[0]["early"] is True and calls[3]["early"] is False
    assert report["tool_distribution"] == {"search": 4, "write": 1, "nope": 1}
    [loop] = report["suspicious_loops"]
    assert loop["tool"] == "search" and loop["count"] == 3 and loop["rounds"] == [1]
    assert report["failures_by_class"] == {"tool_error": 1, "unknown_tool": 1}
    assert "suspect the tool" in report["failure_hints"]["tool_error"]
    assert report["usage"]["input_tokens"] == 450 and report["usage"]["output_tokens"] == 35
    assert [u["input_tokens"] for u in report["usage_by_round"]] == [100, 150, 200]

    priced = _json(capsys, "inspect", loop_run, "--db", db, "--json", "--price-in", "1", "--price-out", "2")  # fmt: skip
    assert priced["usage_by_round"][0]["cost"] == pytest.approx((100 + 40) / 1e6)
    strict = _json(capsys, "inspect", loop_run, "--db", db, "--json", "--loop-threshold", "3")
    assert strict["suspicious_loops"] == []


def test_inspect_shows_discarded_calls_and_text(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    corrected = _json(capsys, "log", "--db", db, "--json")[1]["run_id"]
    report = _json(capsys, "inspect", corrected, "--db", db, "--json")
    assert [(c["status"], c["early"]) for c in report["calls"]] == [
        ("discarded", True),
        ("ok", False),
    ]
    capsys.readouterr()
    assert main(["inspect", "last", "--db", db]) == 0
    assert "round 1" in capsys.readouterr().out


def test_inspect_unknown_run_lists_the_latest(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    ids = [r["run_id"] for r in _json(capsys, "log", "--db", db, "--json")]
    assert main(["inspect", "abc123", "--db", db]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run 'abc123'" in err
    assert all(i in err for i in ids)


def test_trace_writes_one_page(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "trace.html"
    assert main(["trace", "last", "--db", db, "--html", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "model request #1" in page
    for pattern in ("http://", "https://", "src=", "href="):
        assert pattern not in page, pattern


def test_trace_escapes_logged_text(tmp_path: Path) -> None:
    path = str(tmp_path / "runs.db")
    evil = "</script><script>alert(1)</script><b>"
    model = ScriptedModel([tool_call_turn(("search", {"q": evil})), text_turn(evil)])
    Agent(model, [search], log=path).run_sync(evil)
    out = tmp_path / "trace.html"
    assert main(["trace", "last", "--db", path, "--html", str(out)]) == 0
    page = out.read_text()
    assert "<script>alert(1)" not in page and page.count("<script") == 2


# -- toolwire run -------------------------------------------------------------------------------


def _answer() -> bytes:
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Found it."}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]  # fmt: skip
    return (
        b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    )


def _run_cmd(server: FaultServer, *extra: str) -> int:
    return main(["run", "Where is login?", "--model", "openai:demo",
                 "--base-url", f"{server.url}/v1", *extra])  # fmt: skip


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FaultServer(sse(recorded_stream("openai")), sse(_answer())) as s:
        yield s


def test_run_logs_to_toolwire_log_by_default(
    server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run_cmd(server) == 0
    path = str(default_log_path())  # TOOLWIRE_LOG: a temp file (tests/conftest.py)
    assert f"logged to {path}" in capsys.readouterr().err
    [run] = AuditLog(path).runs()
    assert run["prompt"] == "Where is login?" and run["calls"] == 2 and run["outcome"] == "ok"


def test_run_log_path_and_no_log(
    server: FaultServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chosen = tmp_path / "chosen.db"
    assert _run_cmd(server, "--log", str(chosen)) == 0
    assert len(AuditLog(chosen).runs()) == 1
    server.replies = [sse(recorded_stream("openai")), sse(_answer())]
    capsys.readouterr()
    assert _run_cmd(server, "--no-log") == 0
    assert not default_log_path().exists()
    assert "logged to" not in capsys.readouterr().err


def test_default_log_path_follows_xdg(tmp_path: Path) -> None:
    assert default_log_path({"TOOLWIRE_LOG": "/x/y.db"}) == Path("/x/y.db")
    env = {"HOME": "/home/u", "XDG_DATA_HOME": "/data"}
    assert default_log_path(env) == Path("/data/toolwire/runs.db")
    assert default_log_path({"HOME": "/home/u"}) == Path("/home/u/.local/share/toolwire/runs.db")
    # A relative XDG_DATA_HOME is ignored, as the XDG rule says.
    assert default_log_path({"HOME": "/home/u", "XDG_DATA_HOME": "rel"}).parts[:3] == (
        "/",
        "home",
        "u",
    )


def test_help_lists_the_commands_and_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from toolwire.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sqlite3', 'toolwire.observe', 'toolwire.run'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "log" in out and "inspect" in out and "trace" in out
    assert out.strip().endswith("[]")
