"""The shipped sandboxed tools, alone and in an agent run."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolwire
from toolwire import Agent, CallerError, Permissions, ToolStatus
from toolwire.messages import ToolResult
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .conftest import MakeSandbox


def test_the_tools_have_the_fixed_names_and_arguments(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    python = toolwire.sandbox_python_tool(sandbox)
    shell = toolwire.sandbox_shell_tool(sandbox)
    assert (python.name, shell.name) == ("run_python", "run_shell")
    assert python.parameters["required"] == ["code"]
    assert shell.parameters["required"] == ["command"]
    assert python.side_effects and shell.side_effects
    with pytest.raises(CallerError):
        toolwire.sandbox_python_tool("/tmp")  # type: ignore[arg-type]


def test_an_agent_runs_code_and_commands_in_the_workspace(
    make_sandbox: MakeSandbox, workspace: Path
) -> None:
    sandbox = make_sandbox(cpu_seconds=1)
    tools = [toolwire.sandbox_python_tool(sandbox), toolwire.sandbox_shell_tool(sandbox)]
    model = ScriptedModel(
        [
            tool_call_turn(("run_python", {"code": "open('n.txt','w').write(str(6*7))"})),
            tool_call_turn(("run_shell", {"command": "cat n.txt; echo oops >&2; exit 4"})),
            tool_call_turn(("run_python", {"code": "while True: pass"})),
            tool_call_turn(("run_python", {"code": "x" * 100_001})),
            text_turn("done"),
        ]
    )
    result = Agent(model, tools).run_sync("compute")
    wrote, shell, looped, too_long = [m for m in result.messages if isinstance(m, ToolResult)]
    assert wrote.status is ToolStatus.OK and wrote.content.startswith("exit status 0")
    assert shell.status is ToolStatus.OK
    assert shell.content == "exit status 4\n--- stdout ---\n42\n--- stderr ---\noops\n"
    assert looped.content.startswith("exit status 152 (stopped by the sandbox: CPU time limit)")
    assert too_long.status is ToolStatus.ERROR and "100000" in too_long.content  # the run goes on
    assert result.output == "done"
    assert (workspace / "n.txt").read_text() == "42"


def test_sandboxed_tools_behind_an_approval(make_sandbox: MakeSandbox, workspace: Path) -> None:
    sandbox = make_sandbox()
    model = ScriptedModel(
        [tool_call_turn(("run_shell", {"command": "touch made"})), text_turn("ok")]
    )
    agent = Agent(
        model,
        [toolwire.sandbox_shell_tool(sandbox)],
        permissions=Permissions(side_effects="ask"),
        approve=lambda request: "not now",
    )
    [denied] = [m for m in agent.run_sync("go").messages if isinstance(m, ToolResult)]
    assert denied.status is ToolStatus.DENIED and "not now" in denied.content
    assert not (workspace / "made").exists()


def test_the_shell_handler_runs_builtin_shell_calls_in_the_sandbox(
    make_sandbox: MakeSandbox, workspace: Path
) -> None:
    import asyncio

    from toolwire import BuiltinCall, ShellOutput

    handler = toolwire.sandbox_shell_handler(make_sandbox(wall_seconds=2))
    shell = {"type": "shell_call", "call_id": "c1"}
    call = BuiltinCall(
        "shell",
        "c1",
        {"commands": ["echo hi > f.txt && cat f.txt", "ls /workspace", "exit 3"]},
        shell,
    )
    hi, listing, failed = asyncio.run(handler(call))
    assert hi == ShellOutput("hi\n", "", 0)
    assert listing.stdout == "f.txt\n" and failed.exit_code == 3
    assert (workspace / "f.txt").read_text() == "hi\n"
    argv = BuiltinCall(
        "local_shell",
        "c2",
        {"type": "exec", "command": ["echo", "$HOME"]},
        {"type": "local_shell_call"},
    )
    assert asyncio.run(handler(argv)) == [ShellOutput("$HOME\n", "", 0)]  # no shell expands it
    slow = BuiltinCall("shell", "c3", {"commands": ["sleep 30"]}, shell)
    (timed_out,) = asyncio.run(handler(slow))
    assert timed_out.exit_code is None  # sent as {"type": "timeout"}
