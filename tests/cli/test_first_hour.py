"""What a new user meets first: the demo's verdicts, streamed trace, flags and hints."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolwire.cli import build_parser, main
from toolwire.demo import recorded_stream

from ..providers.faultserver import FaultServer, sse
from .test_run_cmd import answer_stream


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip().startswith("toolwire 0.")


def test_debug_is_accepted_after_the_subcommand(tmp_path: Path) -> None:
    raw = tmp_path / "out.txt"
    raw.write_text("hello")
    args = ["parse", "--model", "nobody/unknown-model-xyz", str(raw)]
    assert main(args) == 2  # one line, no traceback
    from toolwire.errors import CallerError

    with pytest.raises(CallerError):
        main([*args, "--debug"])  # the traceback, as before the subcommand
    with pytest.raises(CallerError):
        main(["--debug", *args])


def test_parse_suggests_the_family_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = tmp_path / "out.txt"
    raw.write_text("hello")
    assert main(["parse", "--model", "nobody/unknown-model-xyz", str(raw)]) == 2
    err = capsys.readouterr().err
    assert "--family" in err and "formats.get" not in err


def test_run_help_has_no_markup(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "``" not in out and "source article" not in out
    assert "--timeout" in out and "--grammar" in out and "--events" in out


# -- --tools ---------------------------------------------------------------------------

TOOLS_FILE = '''
from toolwire import tool

@tool(side_effects=False)
def double(x: int) -> int:
    """Double a number."""
    return 2 * x

TOOLS = [double]
NOT_A_TOOL = 42
'''


def _agent_tools(*words: str) -> list[str]:
    from toolwire.cli.run_cmd import build_agent

    args = build_parser().parse_args(
        ["run", "hi", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1", *words]
    )
    # read_result is the agent's own (offered once a result was cut), not a loaded tool
    return [n for n in build_agent(args).toolset.names if n != "read_result"]


def test_tools_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "calc_file_tools.py"
    path.write_text(TOOLS_FILE)
    try:
        assert _agent_tools("--tools", f"{path}:TOOLS") == ["double"]
    finally:
        sys.modules.pop("calc_file_tools", None)


def test_tools_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calc_cwd_tools.py").write_text(TOOLS_FILE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        assert _agent_tools("--tools", "calc_cwd_tools:TOOLS") == ["double"]
    finally:
        sys.modules.pop("calc_cwd_tools", None)


def test_an_attribute_that_is_not_a_tool_is_named_by_its_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "calc_bad_tools.py"
    path.write_text(TOOLS_FILE)
    try:
        code = main(
            [
                "run",
                "hi",
                "--model",
                "openai:m",
                "--base-url",
                "http://h/v1",
                "--tools",
                f"{path}:NOT_A_TOOL",
            ]
        )
    finally:
        sys.modules.pop("calc_bad_tools", None)
    # The temporary path may itself contain "42" (pytest numbers its directories).
    err = capsys.readouterr().err.replace(str(path), "<path>")
    assert code == 2 and "names an object of type int, not a tool" in err and "42" not in err


# -- --timeout and --grammar ---------------------------------------------------------------


def _model(*words: str) -> object:
    from toolwire.cli.run_cmd import build_agent

    args = build_parser().parse_args(["run", "hi", *words])
    return build_agent(args).model


def test_timeout_caps_each_request() -> None:
    model = _model("--model", "openai:m", "--base-url", "http://h/v1", "--timeout", "5")
    timeouts = model.options.timeouts  # type: ignore[attr-defined]
    assert (timeouts.total, timeouts.read, timeouts.connect) == (5, 5, 5)
    model = _model("--model", "openai:m", "--base-url", "http://h/v1", "--timeout", "300")
    timeouts = model.options.timeouts  # type: ignore[attr-defined]
    assert (timeouts.total, timeouts.read) == (300, 120)


def test_timeout_against_a_server_that_never_answers(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as listener:  # accepts connections, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        code = main(
            [
                "run",
                "hi",
                "--model",
                "openai:m",
                "--base-url",
                f"http://127.0.0.1:{port}/v1",
                "--timeout",
                "0.5",
            ]
        )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "time" in err.lower()


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["--model", "openai:m", "--base-url", "http://h/v1", "--timeout", "0"], "> 0"),
        (["--model", "local:smollm2", "--timeout", "3"], "in-process"),
        (["--model", "openai:m", "--base-url", "http://h/v1", "--grammar"], "completions"),
    ],
)
def test_bad_timeout_and_grammar_are_one_line(
    words: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "hi", *words]) == 2
    assert message in capsys.readouterr().err


def test_grammar_turns_on_for_completions_models() -> None:
    model = _model("--model", "completions:Qwen/Qwen2.5-7B-Instruct", "--base-url", "http://h/v1")
    assert model.grammar is False  # type: ignore[attr-defined]
    model = _model(
        "--model", "completions:Qwen/Qwen2.5-7B-Instruct", "--base-url", "http://h/v1", "--grammar"
    )
    assert model.grammar is True  # type: ignore[attr-defined]


def test_dialect_for_openai_compatible_servers(capsys: pytest.CaptureFixture[str]) -> None:
    model = _model("--model", "openai:deepseek-reasoner", "--base-url", "http://h/v1")
    assert model.dialect.name == "openai"  # type: ignore[attr-defined]
    words = ("--model", "openai:deepseek-reasoner", "--base-url", "http://h/v1")
    model = _model(*words, "--dialect", "deepseek")
    assert model.dialect.name == "deepseek"  # type: ignore[attr-defined]
    assert main(["run", "hi", *words, "--dialect", "deepsek"]) == 2
    assert "unknown Chat dialect 'deepsek'" in capsys.readouterr().err
    assert main(["run", "hi", "--model", "local:smollm2", "--dialect", "deepseek"]) == 2
    assert "--dialect is for openai:NAME" in capsys.readouterr().err


# -- the demo's verdicts ------------------------------------------------------------------


def test_demo_says_what_is_right_and_what_the_model_did(
    capsys: pytest.CaptureFixture[str],
) -> None:
    replies = (
        sse(recorded_stream("openai")),  # code search: two explore_code calls
        sse(answer_stream("Both are in auth/.")),
        sse(answer_stream("I cannot check the weather.")),  # weather: no call at all
        sse(answer_stream("unused")),
    )
    with FaultServer(*replies) as server:
        code = main(["run", "--demo", "--model", "openai:m", "--base-url", f"{server.url}/v1"])
    out = capsys.readouterr().out
    assert code == 0
    assert '=== a right answer: two explore_code calls, query "login"' in out
    assert "=== verdict: right calls, in one turn (parallel): round 1: explore_code(" in out
    assert (
        "=== verdict: wrong tool (the model's choice, not a toolwire error): no call, text "
        "'I cannot check the weather.'; then an answer" in out
    )
    assert "tool_choice=required" in out and "tool_choice=auto" in out  # required, then auto
    assert "tool_choice_ignored" in out  # the model ignored tool_choice=required
    assert "TextDelta(" not in out  # text streams on one line; --events shows events


def test_events_flag_shows_one_line_per_event(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FaultServer(sse(recorded_stream("openai")), sse(answer_stream("ok"))) as server:
        main(["run", "x", "--model", "openai:m", "--base-url", f"{server.url}/v1", "--events"])
    out = capsys.readouterr().out
    assert "ToolCallDelta [0] '{\"query\":'" in out and "TextDelta('ok')" in out


def test_plain_view_prints_a_notice_when_required_is_ignored(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FaultServer(sse(answer_stream("No tools today."))) as server:
        code = main(
            [
                "run",
                "x",
                "--model",
                "openai:m",
                "--base-url",
                f"{server.url}/v1",
                "--tool-choice",
                "required",
            ]
        )
    out = capsys.readouterr().out
    assert code == 0 and "notice: the model 'openai:m' answered without a tool call" in out


def test_run_state_splits_queue_and_run_time() -> None:
    from toolwire.cli.run_state import RunState
    from toolwire.messages import ToolCall, ToolResult
    from toolwire.run import ToolCallRunning
    from toolwire.run.events import RequestStarted, ToolResultReady
    from toolwire.run.model import ModelRequest
    from toolwire.turn import ToolRequest
    from toolwire.wire.events import ToolCallReady, ToolCallStarted

    state = RunState()
    state.apply(RequestStarted(1, ModelRequest([])), 0.0)
    assert state.waiting_since == 0.0
    state.apply(ToolCallStarted(0, "c", "f"), 0.5)
    assert state.waiting_since is None
    state.apply(ToolCallReady(0, ToolCall("c", "f", "{}"), ToolRequest("c", "f", "{}", {})), 1.0)
    state.apply(ToolCallRunning(0), 1.5)
    assert state.current.calls[0].state == "running"
    state.apply(ToolResultReady(0, ToolResult("c", "f", "ok")), 2.25)
    call = state.current.calls[0]
    assert (call.queued, call.ran, call.latency) == (0.5, 0.75, 1.25)


def test_streamed_text_stays_one_line_per_part() -> None:
    import io

    from toolwire.cli.trace_view import TraceView
    from toolwire.wire.events import TextDelta, ToolCallDelta, ToolCallStarted

    out = io.StringIO()
    view = TraceView(out)
    for event in (
        TextDelta("Hello"),
        TextDelta(",\nworld"),
        ToolCallStarted(0, "c0", "f"),
        ToolCallDelta(0, '{"a":'),
        ToolCallDelta(0, " 1}"),
        TextDelta("bye"),
    ):
        view.event(event)
    view.finish()
    assert out.getvalue().splitlines() == [
        "  text: Hello,\\nworld",
        "  ToolCallStarted [0] id=c0 name=f",
        '  call [0] f {"a": 1}',
        "  text: bye",
    ]


def test_the_view_shows_each_retry_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    from ..providers.faultserver import status

    busy = status(503, {"error": {"message": "overloaded"}}, Retry_After="0")
    with FaultServer(busy, sse(answer_stream("ok"))) as server:
        code = main(["run", "x", "--model", "openai:m", "--base-url", f"{server.url}/v1"])
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "  retry: OpenAI Chat Completions returned HTTP 503: overloaded; try 2 of 4 in 0.0 s\n"
        in out
    )


def test_the_live_caption_names_the_retry_while_waiting() -> None:
    import io
    import time

    from toolwire.cli.live_view import LiveView
    from toolwire.run.events import RequestStarted
    from toolwire.run.model import ModelRequest
    from toolwire.turn import Notice
    from toolwire.wire.events import TextDelta

    view = LiveView(io.StringIO())
    view.state.apply(RequestStarted(1, ModelRequest([])), time.monotonic())
    view.state.apply(Notice("retry", "... returned HTTP 503: busy; try 2 of 4 in 1.0 s"), 0.1)
    assert "returned HTTP 503: busy; try 2 of 4" in str(view._render().caption)
    view.state.apply(TextDelta("hi"), 0.2)
    assert view.state.retry is None and "HTTP 503" not in str(view._render().caption)


def test_the_demo_judges_the_second_city_in_a_second_round(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def weather(city: str) -> bytes:
        """A Chat stream with one get_weather call for ``city``, tomorrow."""
        arguments = json.dumps({"city": city, "day": "tomorrow"})
        call = {"index": 0, "id": f"c_{city}", "type": "function",
                "function": {"name": "get_weather", "arguments": arguments}}  # fmt: skip
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ]
        return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
            b"data: [DONE]\n\n"
        )

    written = '{"name": "get_weather", "arguments": {"city": "Beijing"}}'
    replies = (
        sse(answer_stream("Nothing to search.")),  # the code search: no call
        sse(weather("Beijing")),
        sse(weather("Shanghai")),
        sse(answer_stream(written)),  # the answer: a call written as text
    )
    with FaultServer(*replies) as server:
        code = main(["run", "--demo", "--model", "openai:m", "--base-url", f"{server.url}/v1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "=== verdict: right calls, across 2 turns: round 1: get_weather(" in out
    assert "no answer: the last turn's text is a JSON tool call to get_weather" in out
    assert "=== answer: (not an answer: the model wrote a tool call as text" in out
    assert "Notice(kind='call_shaped_text'" in out


def test_a_run_cut_at_the_token_limit_says_so_and_logs_outcome_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = answer_stream("The weather in Beijing is").replace(
        b'"finish_reason": "stop"', b'"finish_reason": "length"'
    )
    log = tmp_path / "runs.db"
    with FaultServer(sse(cut)) as server:
        url = f"{server.url}/v1"
        code = main(["run", "weather?", "-m", "openai:m", "--base-url", url, "--log", str(log)])
    out = capsys.readouterr().out
    assert code == 0
    assert "(outcome length: the model's turn was cut at the token limit" in out
    assert out.rstrip().endswith("raise --max-tokens) The weather in Beijing is")
    assert main(["log", "--log", str(log), "--json", "-n", "1"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["outcome"] == "length"
