"""What the CLI prints from a run or a log: shown, never obeyed; bad options: one line.

Tool results and prompts may hold terminal escape sequences (a fetched page); the model's
text may hold rich markup (``[/INST]``, ``[link=...]``). The CLI prints control
characters as visible escapes and rich markup as text. Bad numbers and URLs on the
command line are one line each, never a traceback.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from toolwire import Agent, tool
from toolwire.cli import main
from toolwire.cli.drive import run_prompts
from toolwire.cli.live_view import LiveView
from toolwire.cli.run_state import RunState
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

# A hyperlink, a screen clear, a title change and a C1 CSI: what a fetched page may hold.
HOSTILE = "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07 \x1b[2J \x1b]0;pwned\x07 \x9b31m"
CONTROLS = ("\x1b", "\x07", "\x9b")


@tool
def fetch(url: str) -> str:
    """Fetch a page (this one is hostile)."""
    return f"page at {url}: {HOSTILE}"


def _agent(db: Path | None) -> Agent:
    model = ScriptedModel(
        [tool_call_turn(("fetch", {"url": "http://x\x1b[31m"})), text_turn(f"answer {HOSTILE}")]
    )
    return Agent(model, [fetch], log=str(db) if db else None)


def test_printable_escapes_c0_c1_and_bidi_but_keeps_lines() -> None:
    from toolwire.cli.terminal import printable

    assert printable("a\x1b[2Jb\n\tc\x9b\u202e\x7f") == "a\\x1b[2Jb\n\tc\\x9b\\u202e\\x7f"


@pytest.mark.parametrize("command", ["log", "inspect"])
def test_log_and_inspect_print_no_control_characters(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.db"
    _agent(db).run_sync(f"prompt {HOSTILE}")
    words = [command, "--db", str(db)] + (["last"] if command == "inspect" else [])
    assert main(words) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in CONTROLS)
    if command == "inspect":
        assert "\\x1b]8;;http://evil.example" in out  # shown, escaped


@pytest.mark.parametrize("trace", [False, True])
def test_runs_plain_and_trace_views_print_no_control_characters(trace: bool) -> None:
    out = io.StringIO()
    assert run_prompts(_agent(None), [f"prompt {HOSTILE}"], trace=trace, out=out) == 0
    text = out.getvalue()
    assert not any(c in text for c in CONTROLS)
    assert "\\x1b[2J" in text


def test_the_live_view_shows_markup_from_the_model_as_text() -> None:
    out = io.StringIO()
    view = LiveView(out)
    view.console.force_terminal = True  # render as a terminal would (hyperlinks included)
    view.start("[bold]my prompt[/INST]")
    state = RunState()
    state.apply(_started(), 0.0)
    state.current.text = "partial [/INST] text [link=http://evil.example]here[/link]"
    view.state = state
    view.console.print(view._render())  # the table: caption from the model's text
    view.state.answer = "The answer [/INST] see [link=http://evil.example]this[/link]"
    view.finish()  # was: MarkupError, and the answer lost
    text = out.getvalue()
    assert "[/INST]" in text and "[link=http://evil.example]this[/link]" in text
    assert "\x1b]8;" not in text  # no hyperlink was made


def _started() -> object:
    from toolwire.run.events import RequestStarted
    from toolwire.run.model import ModelRequest

    return RequestStarted(1, ModelRequest([], []), 0.0)


@pytest.mark.parametrize(
    ("words", "needle"),
    [
        (["run", "hi", "--model", "openai:m", "--base-url", "http://h/v1", "--timeout", "nan"], "--timeout"),
        (["run", "hi", "--model", "openai:m", "--base-url", "http://h/v1", "--timeout", "inf"], "--timeout"),
        (["run", "hi", "--model", "openai:m", "--base-url", "http://[::1/v1"], "base URL"),
        (["run", "hi", "--model", "openai:m", "--base-url", "http://127.0.0.1:99999/v1"], "base URL"),
        (["run", "hi", "--model", "openai:m", "--base-url", "ftp://h/v1"], "base URL"),
        (["run", "hi", "--model", "openai:m", "--base-url", "http://h/v1", "--max-rounds", "99999999999999999999"], "--max-rounds"),
        (["pipeline", "--file", "MISSING-FILE.sse"], "MISSING-FILE.sse"),
        (["log", "--limit", "99999999999999999999"], "--limit"),
        (["log", "--limit", "0"], "--limit"),
        (["inspect", "last", "--loop-threshold", "99999999999999999999"], "--loop-threshold"),
        (["inspect", "last", "--price-in", "nan", "--price-out", "1"], "--price-in"),
    ],
)  # fmt: skip
def test_bad_options_are_one_line(
    words: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.db"
    if words[0] in ("log", "inspect"):
        _agent(db).run_sync("go")
        capsys.readouterr()
        words = [*words, "--db", str(db)]
    assert main(words) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err
