"""The shipped sandboxed tools: run Python code, run a shell command; and the handler
that runs the Responses API's ``shell`` / ``local_shell`` calls in a sandbox.

Each runs in the given :class:`~toolwire.safety.Sandbox` (its workspace is the working
directory) and returns the exit status, stdout and stderr as the result text. A
non-zero exit status is the command's answer, not the tool's failure: the result is
``ok`` and the model reads the status and stderr (a coding agent iterates on its
errors without spending the run's tool-error budget). The tool fails — an ``error``
result, the run goes on — only when the sandbox itself cannot run the command.

Both declare side effects and are not concurrency-safe (their calls share one
workspace), so the executor runs them one at a time, and a ``Permissions`` policy with
``side_effects="ask"`` asks before each.
"""

from __future__ import annotations

from ..errors import ModelOutputError
from ..history.responses_builtin import BuiltinCall, BuiltinHandler, ShellOutput
from ..tools.tool import Tool, tool
from .sandbox import Sandbox

__all__ = [
    "MAX_SOURCE_CHARS",
    "sandbox_python_tool",
    "sandbox_shell_handler",
    "sandbox_shell_tool",
]

MAX_SOURCE_CHARS = 100_000
"""The longest code or command line accepted (it is passed as one argument)."""

_PYTHON = "python3"


def sandbox_python_tool(sandbox: Sandbox) -> Tool:
    """A tool ``run_python(code)`` that runs Python source in ``sandbox``.

    The code runs as ``python3 -c CODE`` in the workspace (the sandbox's ``python3``,
    the system's ``/usr/bin/python3`` unless its environment says otherwise).
    """
    _check_sandbox(sandbox)

    async def run_python(code: str) -> str:
        """Run Python 3 code in an isolated sandbox and return its exit status, stdout and stderr.

        The working directory is a scratch workspace that persists between calls; there is
        no network access. Print what you want to see.

        Args:
            code: The Python source to run.
        """
        result = await sandbox.run([_PYTHON, "-c", _source("code", code)])
        return result.render()

    return tool(name="run_python", side_effects=True, timeout=_timeout(sandbox))(run_python)


def sandbox_shell_tool(sandbox: Sandbox) -> Tool:
    """A tool ``run_shell(command)`` that runs a ``/bin/sh`` command line in ``sandbox``."""
    _check_sandbox(sandbox)

    async def run_shell(command: str) -> str:
        """Run a shell command line (sh) in an isolated sandbox and return its exit status, stdout and stderr.

        The working directory is a scratch workspace that persists between calls; there is
        no network access.

        Args:
            command: The command line, e.g. "ls -la && cat notes.txt".
        """
        result = await sandbox.run(["/bin/sh", "-c", _source("command", command)])
        return result.render()

    return tool(name="run_shell", side_effects=True, timeout=_timeout(sandbox))(run_shell)


def sandbox_shell_handler(sandbox: Sandbox) -> BuiltinHandler:
    """A ``builtin_handlers`` handler for ``shell`` and ``local_shell`` calls that runs
    them in ``sandbox``: ``Agent(builtin_handlers={"shell": h, "local_shell": h})``.

    A ``shell_call``'s commands run one after another, each as ``/bin/sh -c COMMAND``;
    a ``local_shell_call``'s argv runs as it is (no shell). A command the sandbox's wall
    clock stopped reports a timeout. The call's own ``timeout_ms``, ``env`` and
    ``working_directory`` are not applied: the sandbox's limits and workspace are.
    """
    _check_sandbox(sandbox)

    async def handle(call: BuiltinCall) -> list[ShellOutput]:
        if call.kind == "local_shell":
            argv = [_source("command", str(a)) for a in call.action.get("command") or []]
            return [await _shell_output(sandbox, argv)]
        return [
            await _shell_output(sandbox, ["/bin/sh", "-c", _source("command", command)])
            for command in call.commands
        ]

    return handle


async def _shell_output(sandbox: Sandbox, argv: list[str]) -> ShellOutput:
    result = await sandbox.run(argv)
    code = None if result.timed_out else result.returncode
    return ShellOutput(result.stdout, result.stderr, code)


def _check_sandbox(sandbox: object) -> None:
    from ..errors import CallerError

    if not isinstance(sandbox, Sandbox):
        raise CallerError(
            f"a sandboxed tool needs a toolwire.Sandbox, not {type(sandbox).__name__}",
            hint="toolwire.sandbox_python_tool(toolwire.Sandbox('/path/to/workspace'))",
        )


def _source(name: str, text: str) -> str:
    if "\0" in text:
        raise ModelOutputError(f"the {name} contains a NUL character")
    if len(text) > MAX_SOURCE_CHARS:
        raise ModelOutputError(
            f"the {name} is {len(text)} characters long; the most is {MAX_SOURCE_CHARS}",
            hint=f"write it to a file in the workspace in parts, or shorten the {name}",
        )
    return text


def _timeout(sandbox: Sandbox) -> float:
    """The executor's timeout: the sandbox's wall clock plus time to kill and reap."""
    return sandbox.wall_seconds + 15.0
