"""Error results: what the model reads when one of its calls failed.

An invalid or failed call is never a crash: it becomes that call's error
:class:`~toolwire.messages.ToolResult`, whose content tells the model what went wrong
and, for an invalid call, what the tool expects (the schema), so that the model can
try again. When to stop trying is the retry budget's decision
(:mod:`toolwire.policies.budgets`).
"""

from __future__ import annotations

from ..errors import CallerError
from ..messages import TOOL_ERROR_PREFIX, ToolResult, ToolStatus
from .tool import Tool
from .validate import Validation

__all__ = ["FAILURE_ADVICE", "error_result", "failure_content", "failure_result"]


def error_result(call_id: str, validation: Validation) -> ToolResult:
    """The error result for a call that failed validation (never executed).

    Raises:
        CallerError: ``validation`` is ok (a valid call has no error result).
    """
    if validation.ok:
        raise CallerError("error_result() needs a failed validation; this call is valid")
    return ToolResult(call_id, validation.tool, validation.message, ToolStatus.ERROR)


FAILURE_ADVICE = "Try again if the failure looks temporary, or take a different approach."
"""The line after the reason in the result of a call that ran and failed."""


def failure_content(name: str, error: BaseException | str, tool: Tool | None = None) -> str:
    """The text the model reads when a call ran and failed.

    Args:
        name: The tool name.
        error: The exception the tool raised, or a reason.
        tool: The tool (its ``timeout`` names the limit of a call that timed out).
    """
    if isinstance(error, BaseException):
        reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    else:
        reason = error
    if isinstance(error, TimeoutError) and tool is not None and tool.timeout:
        reason = f"timed out after {tool.timeout:g} s"
    # No schema here: the arguments were valid (invalid calls never run), so quoting the
    # schema would tell the model its arguments were wrong. Only validation failures
    # (:func:`error_result`) carry it.
    lines = [f"{TOOL_ERROR_PREFIX}the call to `{name}` failed: {reason}"]
    lines.append(FAILURE_ADVICE)
    return "\n".join(lines)


def failure_result(
    call_id: str,
    name: str,
    error: BaseException | str,
    *,
    tool: Tool | None = None,
    status: ToolStatus = ToolStatus.ERROR,
) -> ToolResult:
    """The error result for a call that ran and failed (or timed out: pass ``status``)."""
    if status is ToolStatus.OK:
        raise CallerError("failure_result() needs an error status, not ok")
    return ToolResult(call_id, name, failure_content(name, error, tool), status)
