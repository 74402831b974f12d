"""``toolwire run``: an agent over a loopback OpenAI-compatible server, and its errors."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from toolwire.cli import main
from toolwire.cli.plain_view import latency_text
from toolwire.cli.run_state import RunState
from toolwire.demo import recorded_stream
from toolwire.errors import UnknownModelSpecError

from ..providers.faultserver import FaultServer, sse


def answer_stream(text: str) -> bytes:
    """A Chat Completions stream that answers ``text`` without calls."""
    chunks = [
        {
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ]
        },
        {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    return (
        b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    )


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FaultServer(
        sse(recorded_stream("openai")), sse(answer_stream("Login is in auth/login.py."))
    ) as s:
        yield s


def test_run_against_a_served_model_prints_calls_and_answer(
    server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "Where are login and session?",
            "--model",
            "openai:demo",
            "--base-url",
            f"{server.url}/v1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "[0] explore_code" in out and "[1] explore_code" in out and " ok " in out
    assert out.strip().endswith("Login is in auth/login.py.")
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "tool"]
    assert "auth/login.py" in second[2]["content"]


def test_trace_shows_requests_deltas_calls_results_and_history(
    server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["run", "Where?", "--model", "openai:demo", "--base-url", f"{server.url}/v1", "--trace"])
    out = capsys.readouterr().out
    for marker in (
        "--- round 1 request: tools [explore_code, get_weather, read_result]",
        'call [0] explore_code {"query":',
        "  text: Let me search both keywords.\n",
        "ToolCallReady [1] explore_code",
        "result [0] explore_code ok",
        "--- round 1 assembled: explore_code",
        "=== answer: Login is in auth/login.py.",
        "=== history (OpenAI Chat form)",
        '"role": "tool", "tool_call_id": "call_b"',
        "=== tokens per request (estimated; input and cached as the provider reported)",
        "| round | tools | calls | results | other | total | input | cached |",
    ):
        assert marker in out, marker


def test_unknown_spec_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hi", "--model", "gpt-4.1-mini"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean openai:gpt-4.1-mini" in err


def test_missing_key_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["run", "hi", "--model", "anthropic:claude-sonnet-4-5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ANTHROPIC_API_KEY" in err


def test_unreachable_endpoint_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert (
        main(["run", "hi", "--model", "openai:m", "--base-url", f"http://127.0.0.1:{port}/v1"]) == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"127.0.0.1:{port}" in err and "--base-url" in err


def test_debug_shows_the_traceback() -> None:
    # main lets the error go with --debug: the interpreter prints its traceback.
    with pytest.raises(UnknownModelSpecError):
        main(["--debug", "run", "hi", "--model", "nope:x"])


def test_prompt_or_demo_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run"]) == 2
    assert "no prompt given" in capsys.readouterr().err


def test_bad_tools_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            ["run", "hi", "--model", "openai:m", "--base-url", "http://h/v1", "--tools", "nomodule"]
        )
        == 2
    )
    # A bare name is a whole module now (issue 31): one that does not import says so.
    assert "cannot import 'nomodule'" in capsys.readouterr().err
    assert (
        main(
            [
                "run",
                "hi",
                "--model",
                "openai:m",
                "--base-url",
                "http://h/v1",
                "--tools",
                "toolwire.demo.tools:NOPE",
            ]
        )
        == 2
    )
    assert "no attribute" in capsys.readouterr().err


def test_tools_from_a_module(server: FaultServer, capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "run",
        "x",
        "--model",
        "openai:m",
        "--base-url",
        f"{server.url}/v1",
        "--tools",
        "toolwire.demo.tools:explore_code",
    ]
    assert main(args) == 0
    tools = server.requests[0].body["tools"]
    assert [t["function"]["name"] for t in tools] == ["explore_code", "read_result"]


def test_help_needs_no_provider_and_no_key() -> None:
    code = (
        "import sys; from toolwire.cli import main\ntry:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('toolwire.providers', 'httpx', 'rich', 'llama_cpp'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PATH": ""},
    )
    assert "--base-url" in result.stdout
    assert result.stdout.strip().endswith("[]")


def test_run_state_tracks_latency_from_ready_to_result() -> None:
    from toolwire.messages import ToolCall, ToolResult
    from toolwire.run.events import RequestStarted, ToolResultReady
    from toolwire.run.model import ModelRequest
    from toolwire.turn import ToolRequest
    from toolwire.wire.events import ToolCallReady, ToolCallStarted

    state = RunState()
    state.apply(RequestStarted(1, ModelRequest([])), 0.0)
    state.apply(ToolCallStarted(0, "c", "get_weather"), 0.1)
    state.apply(
        ToolCallReady(
            0, ToolCall("c", "get_weather", "{}"), ToolRequest("c", "get_weather", "{}", {})
        ),
        1.0,
    )
    assert state.current.calls[0].state == "ready"
    state.apply(ToolResultReady(0, ToolResult("c", "get_weather", "Sunny")), 1.25)
    call = state.current.calls[0]
    assert call.state == "ok" and call.latency == 0.25 and latency_text(call.latency) == "250 ms"
    assert latency_text(2.5) == "2.50 s" and latency_text(None) == "-"


def test_demo_runs_both_prompts_and_reports_a_failed_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ..providers.faultserver import status

    rejected = status(400, {"error": {"message": "model not found"}})
    replies = (rejected, sse(recorded_stream("openai")), sse(answer_stream("Cloudy in Beijing.")))
    with FaultServer(*replies) as server:
        code = main(["run", "--demo", "--model", "openai:m", "--base-url", f"{server.url}/v1"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.count("\n") == 1 and "model not found" in captured.err
    assert "=== prompt: Search the code" in captured.out
    assert "=== prompt: What's tomorrow's weather in Beijing and Shanghai?" in captured.out
    assert "=== answer: Cloudy in Beijing." in captured.out


def test_failures_of_a_run_are_reported_after_the_answer() -> None:
    import io

    from toolwire import Agent
    from toolwire.cli.drive import run_prompts
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

    model = ScriptedModel(
        [tool_call_turn(("list_files", {}), ("get_weather", {"city": "Paris"})), text_turn("done")]
    )
    out = io.StringIO()
    assert run_prompts(Agent(model, DEMO_TOOLS), ["weather?"], trace=False, out=out) == 0
    text = out.getvalue()
    assert "failures in this run" in text
    assert "unknown" in text.lower() and "schema" in text.lower()
