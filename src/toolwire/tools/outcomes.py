"""Call outcomes: the one place that decides what a call's result says and how it failed.

Every result toolwire writes for a call — its text, its status and its failure class —
is built here, and everything that reports on calls reads the class from here:
``RunDiagnostics`` and the failure budget (through the loop), the audit log's
``failure_class`` column, ``toolwire log``'s failure count, the OpenTelemetry span's
``error.type``, and replay. Nobody parses a result's English back into a reason.

The vocabulary (also in ARCHITECTURE.md; later work adds to it, never renames):

**Call status** (:class:`~toolwire.messages.ToolStatus`; :data:`CallStatus`):
``ok``; ``error`` (the failure class says which kind); ``timeout``; ``cancelled`` (it
started and was stopped); ``denied`` (the permission gate said no: never ran);
``not_executed`` (never started: the run stopped, a usage limit, a forced final
answer); ``interrupted`` (the process stopped while it ran, or its result never reached
the log: whether it took effect is unknown; a resumed run never runs such a call again
unless it is harmless to repeat).
The audit log adds ``discarded`` (:data:`LoggedStatus`): an early start that the final
turn replaced.

**Failure class** (:data:`FailureClass`): why a call failed — a validation failure
(``invalid_json``, ``schema_violation``, ``missing_required``,
``unexpected_parameter``, ``unknown_tool``, ``empty_call``), or how it ran
(``tool_error``: the tool raised or returned a value with no text; ``timeout``;
``denied``). :func:`failure_class` is the one mapping from a call to its class.

**Run outcome** (:data:`RunOutcome`): ``ok``; ``error`` (an exception stopped it);
``cancelled``; ``paused`` (waiting for approvals); ``length`` (the last turn was cut at
the token limit: ``RunResult.truncated`` is true, no exception); ``running`` (in the
log, not ended yet); ``interrupted`` (in the log: its process is gone). Resumable
(:func:`is_resumable`): ``paused``, ``interrupted``, ``cancelled`` (a Ctrl-C: its calls
were answered and logged), and ``error`` from a provider failure.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, TypeAlias

from ..errors import CallerError, ProviderError, ReplayedToolError
from ..messages import TOOL_ERROR_PREFIX, TextPart, ToolResult, ToolStatus
from .tool import Tool
from .validate import Validation, ValidationKind

__all__ = [
    "FAILURE_ADVICE",
    "INTERRUPTED_REASON",
    "RESUMABLE_OUTCOMES",
    "CallStatus",
    "ExecutionFailure",
    "FailureClass",
    "LoggedStatus",
    "RunOutcome",
    "budget_result",
    "denied_result",
    "error_result",
    "failure_class",
    "failure_content",
    "failure_result",
    "interrupted_result",
    "is_resumable",
    "not_executed_result",
    "raised_result",
    "refused_image_result",
    "unfinished_result",
    "with_earlier_run",
]

CallStatus: TypeAlias = Literal[
    "ok", "error", "timeout", "cancelled", "denied", "not_executed", "interrupted"
]
"""How a call ended (``ToolStatus`` holds the ones toolwire writes today)."""

LoggedStatus: TypeAlias = CallStatus | Literal["discarded"]
"""A call row's status in the audit log."""

ExecutionFailure: TypeAlias = Literal["tool_error", "timeout", "denied"]
"""The failure classes of a valid call: how it ran."""

FailureClass: TypeAlias = ValidationKind | ExecutionFailure
"""Why a call failed: its validation failure, or how it ran."""

RunOutcome: TypeAlias = Literal[
    "ok", "error", "cancelled", "paused", "length", "running", "interrupted"
]
"""How a run ended (``running`` and ``interrupted`` are read from the audit log)."""

RESUMABLE_OUTCOMES: frozenset[RunOutcome] = frozenset({"paused", "interrupted", "cancelled"})
"""Outcomes a run can always go on from (an ``error`` only when the provider failed)."""

_EXECUTION_FAILURES: dict[ToolStatus, ExecutionFailure] = {
    ToolStatus.ERROR: "tool_error",
    ToolStatus.TIMEOUT: "timeout",
    ToolStatus.DENIED: "denied",
}

FAILURE_ADVICE = "Try again if the failure looks temporary, or take a different approach."
"""The line after the reason in the result of a call that ran and failed."""


def failure_class(
    validation_kind: ValidationKind | None, status: ToolStatus
) -> FailureClass | None:
    """The failure class of a call: its validation failure, else how it ran.

    ``cancelled`` and ``not_executed`` calls have none: stopping a call is not the
    call's failure.
    """
    if validation_kind is not None:
        return validation_kind
    return _EXECUTION_FAILURES.get(status)


def is_resumable(outcome: str, error: BaseException | None = None) -> bool:
    """Whether a run that ended with ``outcome`` (and ``error``) can be continued."""
    return outcome in RESUMABLE_OUTCOMES or (
        outcome == "error" and isinstance(error, ProviderError)
    )


# -- results ------------------------------------------------------------------------------


def error_result(call_id: str, validation: Validation) -> ToolResult:
    """The error result for a call that failed validation (never executed).

    Raises:
        CallerError: ``validation`` is ok (a valid call has no error result).
    """
    if validation.ok:
        raise CallerError("error_result() needs a failed validation; this call is valid")
    return ToolResult(call_id, validation.tool, validation.message, ToolStatus.ERROR)


def failure_content(name: str, error: BaseException | str, tool: Tool | None = None) -> str:
    """The text the model reads when a call ran and failed.

    Args:
        name: The tool name.
        error: The exception the tool raised, or a reason.
        tool: The tool (its ``timeout`` names the limit of a call that timed out).
    """
    if isinstance(error, ReplayedToolError) and error.result is not None:
        return error.result  # a logged failure, failing again word for word
    if isinstance(error, BaseException):
        reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    else:
        reason = error
    if isinstance(error, TimeoutError) and tool is not None and tool.timeout:
        reason = f"timed out after {tool.timeout:g} s"
    # No schema here: the arguments were valid (invalid calls never run), so quoting the
    # schema would tell the model its arguments were wrong. Only validation failures
    # (:func:`error_result`) carry it.
    return f"{TOOL_ERROR_PREFIX}the call to `{name}` failed: {reason}\n{FAILURE_ADVICE}"


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


def raised_result(call_id: str, tool: Tool, error: Exception) -> ToolResult:
    """The result of a call whose tool raised ``error`` (after any retries): ``timeout``
    for a ``TimeoutError`` (the tool's own deadline) or a replayed timeout, else
    ``error``."""
    timed_out = isinstance(error, TimeoutError) or (
        isinstance(error, ReplayedToolError) and error.timed_out
    )
    status = ToolStatus.TIMEOUT if timed_out else ToolStatus.ERROR
    return failure_result(call_id, tool.name, error, tool=tool, status=status)


def refused_image_result(result: ToolResult, said: str) -> ToolResult:
    """The error result of a call whose images the provider refused (its 400, ``said``):
    which images, the provider's words, and the text the tool returned besides them."""
    images = result.images
    many = len(images) > 1
    listed = ", ".join(
        f"image {number}: {image.media_type}, {len(image.data)} bytes"
        for number, image in enumerate(images, 1)
    )
    text = (
        f"{TOOL_ERROR_PREFIX}the provider refused the image{'s' if many else ''} the call "
        f"to `{result.name}` returned ({listed}), so the model cannot see "
        f"{'them' if many else 'it'}: {said}"
    )
    if result.content:
        text += f"\nThe result's text was:\n{result.content}"
    return ToolResult(result.call_id, result.name, text, ToolStatus.ERROR)


def denied_result(call_id: str, name: str, reason: str) -> ToolResult:
    """The result of a call the permission gate denied (it never ran)."""
    text = f"{TOOL_ERROR_PREFIX}the call to `{name}` was denied and did not run: {reason}"
    return ToolResult(call_id, name, text, ToolStatus.DENIED)


def not_executed_result(call_id: str, name: str, reason: str) -> ToolResult:
    """The result of a call that never started (``reason`` without a final period)."""
    text = f"{TOOL_ERROR_PREFIX}the call to `{name}` was not executed: {reason}."
    return ToolResult(call_id, name, text, ToolStatus.NOT_EXECUTED)


INTERRUPTED_REASON = "the process stopped while this call ran; whether it took effect is unknown"
"""Why a call is ``interrupted``: said once, read by the model, the log and the CLI."""


def interrupted_result(call_id: str, name: str, reason: str = INTERRUPTED_REASON) -> ToolResult:
    """The result of a call that was (or may have been) running when its process stopped.

    Not ``not_executed``: nobody knows whether it ran, so the model is told so, and it
    decides whether to check or call again.
    """
    text = f"{TOOL_ERROR_PREFIX}the call to `{name}` was interrupted: {reason}."
    return ToolResult(call_id, name, text, ToolStatus.INTERRUPTED)


def unfinished_result(call_id: str, name: str, reason: str, *, started: bool) -> ToolResult:
    """The result of a call stopped before it ended: ``cancelled`` if its tool had
    started, else ``not_executed``."""
    if not started:
        return not_executed_result(call_id, name, reason)
    text = f"{TOOL_ERROR_PREFIX}the call to `{name}` was cancelled before it finished: {reason}."
    return ToolResult(call_id, name, text, ToolStatus.CANCELLED)


def budget_result(call_id: str, name: str, budget: float | None) -> ToolResult:
    """A straggler of a parallel batch whose time budget ran out, and which may not run
    again (side effects, not idempotent): a ``timeout`` naming the budget."""
    reason = (
        f"the parallel batch's time budget ({budget:g} s) ran out before it finished, and "
        "the tool may not run twice (it has side effects and is not idempotent)"
    )
    return failure_result(call_id, name, reason, status=ToolStatus.TIMEOUT)


def with_earlier_run(result: ToolResult, name: str, reason: str) -> ToolResult:
    """``result``, saying that an earlier reading of the call had started and was then
    discarded (``reason``): the history must not claim that nothing happened."""
    note = (
        f" (Before the turn ended, an earlier reading of this call, `{name}`, had "
        f"already started and was then discarded: {reason}.)"
    )
    if result.parts:  # a result with images: the note is a text part too
        parts = (*result.parts, TextPart(note))
        return dataclasses.replace(result, content=result.content + note, parts=parts)
    return dataclasses.replace(result, content=result.content + note)
