"""Whole runs over loopback HTTP with the Responses provider: the client-executed
built-in calls (``shell_call``, ``local_shell_call``, ``apply_patch_call``) each get
exactly one output, in the documented shape, in the next request — from the handler
the agent was given, or saying the call was not executed. The model's side is replayed
from recordings (tests/wire/fixtures/recorded, sources and licences in its README); the
agent, the provider, the HTTP client and the shell commands are the real ones."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, BuiltinCall, CallerError, ShellOutput
from toolwire.history.openai_responses_owed import NOT_EXECUTED
from toolwire.providers.openai_responses import OpenAIResponsesModel

from .faultserver import FaultServer, sse
from .test_responses_custom_and_mcp import _answer, _sse

OUTPUT_OF = {
    "shell-tool.1": "shell_call_output",
    "local-shell-tool.1": "local_shell_call_output",
    "apply-patch-tool.1": "apply_patch_call_output",
}


def _run(recording: str, **agent_options: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Run the recorded turn, then an answer: (result, the call item, its one output)."""
    with FaultServer(sse(_sse(recording), chunks=[5]), sse(_answer("Done."))) as server:
        model = OpenAIResponsesModel("gpt-5.1", api_key="k", base_url=f"{server.url}/v1")
        result = Agent(model, **agent_options).run_sync("Do it")
        assert len(server.requests) == 2
        items = server.requests[1].body["input"]
    kind = OUTPUT_OF[recording]
    (call,) = [item for item in items if item["type"] == kind.removesuffix("_output")]
    outputs = [item for item in items if item["type"] == kind]
    assert len(outputs) == 1, "exactly one output per call"
    assert outputs[0]["call_id"] == call["call_id"]
    assert items.index(outputs[0]) > items.index(call)
    assert result.output == "Done."
    return result, call, outputs[0]


@pytest.mark.parametrize("recording", sorted(OUTPUT_OF))
def test_without_a_handler_each_call_is_answered_as_not_executed(
    no_keys: None, recording: str
) -> None:
    _, call, output = _run(recording)
    if recording == "apply-patch-tool.1":
        assert output["status"] == "failed" and output["output"].startswith(NOT_EXECUTED)
    elif recording == "shell-tool.1":
        assert len(output["output"]) == len(call["action"]["commands"]) == 1
        for run in output["output"]:
            assert run["stdout"] == "" and run["stderr"].startswith(NOT_EXECUTED)
            assert run["outcome"] == {"type": "exit", "exit_code": 126}
    else:
        assert set(output) == {"type", "call_id", "output"}
        assert output["output"].startswith(NOT_EXECUTED)


def test_a_shell_handler_runs_the_commands(no_keys: None, tmp_path: Path) -> None:
    (tmp_path / "Desktop").mkdir()
    (tmp_path / "Desktop" / "dec1.txt").write_text("THIS WORKS!\n")
    seen: list[BuiltinCall] = []

    def shell(call: BuiltinCall) -> list[ShellOutput]:
        seen.append(call)
        outputs = []
        for command in call.commands:
            done = subprocess.run(
                ["sh", "-c", command],
                capture_output=True,
                text=True,
                cwd=tmp_path,
                env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
                check=False,
            )
            outputs.append(ShellOutput(done.stdout, done.stderr, done.returncode))
        return outputs

    _, call, output = _run("shell-tool.1", builtin_handlers={"shell": shell})
    assert [c.call_id for c in seen] == [call["call_id"]]
    assert set(output) == {"type", "call_id", "output"}
    assert call["action"]["commands"] == ["ls -a ~/Desktop"]
    assert output["output"] == [
        {"stdout": ".\n..\ndec1.txt\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}
    ]


def test_an_async_local_shell_handler_and_a_timeout(no_keys: None) -> None:
    async def local_shell(call: BuiltinCall) -> ShellOutput:
        assert call.kind == "local_shell" and call.action["command"] == ["ls", "-a", "~"]
        assert call.commands == ["ls -a '~'"]  # an argv: no shell expands the ~
        return ShellOutput("a\nb\n", "warning\n")

    _, _, output = _run("local-shell-tool.1", builtin_handlers={"local_shell": local_shell})
    assert output["output"] == "a\nb\nwarning\n"

    def shell(call: BuiltinCall) -> ShellOutput:
        return ShellOutput(stderr="too slow", exit_code=None)

    _, _, output = _run("shell-tool.1", builtin_handlers={"shell": shell})
    assert output["output"] == [
        {"stdout": "", "stderr": "too slow", "outcome": {"type": "timeout"}}
    ]


def test_an_apply_patch_handler_creates_the_file(no_keys: None, tmp_path: Path) -> None:
    def apply_patch(call: BuiltinCall) -> str:
        operation = call.action
        assert operation["type"] == "create_file"
        lines = [line[1:] for line in operation["diff"].splitlines(keepends=True)]
        (tmp_path / operation["path"]).write_text("".join(lines))
        return f"created {operation['path']}"

    _, call, output = _run("apply-patch-tool.1", builtin_handlers={"apply_patch": apply_patch})
    assert output == {
        "type": "apply_patch_call_output",
        "call_id": call["call_id"],
        "status": "completed",
        "output": "created shopping-checklist.md",
    }
    assert (tmp_path / "shopping-checklist.md").read_text().startswith("## Shopping Checklist\n")


def test_a_failing_or_wrong_handler_answers_the_call_as_not_executed(no_keys: None) -> None:
    def broken(call: BuiltinCall) -> str:
        raise PermissionError("read-only tree")

    _, _, output = _run("apply-patch-tool.1", builtin_handlers={"apply_patch": broken})
    assert output["status"] == "failed"
    assert output["output"] == (
        f"{NOT_EXECUTED}: the apply_patch handler failed: PermissionError: read-only tree"
    )
    _, _, output = _run("local-shell-tool.1", builtin_handlers={"local_shell": lambda c: 42})
    assert output["output"].startswith(NOT_EXECUTED) and "ShellOutput" in output["output"]


def test_the_final_forced_turn_runs_no_handler(no_keys: None) -> None:
    def shell(call: BuiltinCall) -> str:
        raise AssertionError("must not run: no one would read its output")

    with FaultServer(sse(_sse("shell-tool.1"))) as server:
        model = OpenAIResponsesModel("gpt-5.1", api_key="k", base_url=f"{server.url}/v1")
        result = Agent(model, max_rounds=0, builtin_handlers={"shell": shell}).run_sync("Go")
    (output,) = [p for p in result.messages[-1].parts if p.type == "shell_call_output"]  # type: ignore[union-attr]
    assert output.data["output"][0]["stderr"].startswith(NOT_EXECUTED)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("handlers", "words"),
    [
        ({"bash": print}, "unknown kind 'bash'"),
        ({"shell": "ls"}, "must be a function"),
        ([print], "must be a dict"),
    ],
)
def test_bad_handlers_are_the_callers_error(handlers: Any, words: str) -> None:
    with pytest.raises(CallerError, match=words):
        Agent(OpenAIResponsesModel("gpt-5", api_key="k"), builtin_handlers=handlers)


def test_the_recorded_items_round_trip_as_json(no_keys: None) -> None:
    """The output parts the agent adds are plain JSON (they are sent and logged)."""
    result, _, output = _run("shell-tool.1")
    assert json.loads(json.dumps(output)) == output
    assert result.messages  # the history holds the call and its output


def test_builtin_tools_are_declared_after_the_agents_tools(no_keys: None) -> None:
    from toolwire import tool

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    with FaultServer(sse(_sse("apply-patch-tool.1")), sse(_answer("Done."))) as server:
        model = OpenAIResponsesModel("gpt-5.1", api_key="k", base_url=f"{server.url}/v1")
        settings = {"builtin_tools": [{"type": "apply_patch"}, {"type": "shell"}]}
        Agent(model, [lookup], settings=settings).run_sync("Do it")
        first, second = (seen.body for seen in server.requests)
    # lookup, then the context policy's read_result (offered from the first request)
    assert [t["type"] for t in first["tools"]] == ["function", "function", "apply_patch", "shell"]
    assert second["tools"] == first["tools"] and "builtin_tools" not in first


@pytest.mark.parametrize("value", [{"type": "shell"}, ["shell"], [{"kind": "shell"}]])
def test_builtin_tools_must_be_tool_objects(value: Any) -> None:
    from toolwire.run.model import ModelRequest

    model = OpenAIResponsesModel("gpt-5.1", api_key="k")
    with pytest.raises(CallerError, match="builtin_tools"):
        model.build_request(ModelRequest([], settings={"builtin_tools": value}))
