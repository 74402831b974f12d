"""The one mapping from a call to its status and failure class (toolwire.tools.outcomes)."""

from __future__ import annotations

from typing import get_args

import pytest

from toolwire.errors import ProtocolError, ReplayedToolError, ToolExecutionError
from toolwire.messages import TOOL_ERROR_PREFIX, ToolStatus
from toolwire.policies.diagnostics import FAILURE_KINDS
from toolwire.tools import outcomes, tool


@tool(timeout=2)
def lookup(key: str) -> str:
    """Look a key up."""
    return key


@pytest.mark.parametrize(
    ("kind", "status", "expected"),
    [
        (None, ToolStatus.OK, None),
        (None, ToolStatus.ERROR, "tool_error"),
        (None, ToolStatus.TIMEOUT, "timeout"),
        (None, ToolStatus.DENIED, "denied"),
        (None, ToolStatus.CANCELLED, None),
        (None, ToolStatus.NOT_EXECUTED, None),
        ("invalid_json", ToolStatus.ERROR, "invalid_json"),
        ("unknown_tool", ToolStatus.ERROR, "unknown_tool"),
    ],
)
def test_failure_class(kind: str | None, status: ToolStatus, expected: str | None) -> None:
    assert outcomes.failure_class(kind, status) == expected  # type: ignore[arg-type]


def test_every_failure_class_is_one_diagnostics_counts() -> None:
    classes = {c for alias in get_args(outcomes.FailureClass) for c in get_args(alias)}
    assert classes <= set(FAILURE_KINDS)
    assert {"tool_error", "timeout", "denied", "invalid_json"} <= classes


def test_every_status_toolwire_writes_is_in_the_vocabulary() -> None:
    assert {s.value for s in ToolStatus} <= set(get_args(outcomes.CallStatus))


def test_results_say_what_happened() -> None:
    denied = outcomes.denied_result("c1", "write", "not allowed")
    assert denied.status is ToolStatus.DENIED and denied.content.startswith(TOOL_ERROR_PREFIX)
    stopped = outcomes.unfinished_result("c2", "write", "the run was cancelled", started=True)
    never = outcomes.unfinished_result("c3", "write", "the run was cancelled", started=False)
    assert (stopped.status, never.status) == (ToolStatus.CANCELLED, ToolStatus.NOT_EXECUTED)
    assert never.content.endswith("was not executed: the run was cancelled.")
    budget = outcomes.budget_result("c4", "write", 1.5)
    assert budget.status is ToolStatus.TIMEOUT and "(1.5 s)" in budget.content


def test_raised_results_take_their_status_from_the_exception() -> None:
    timed_out = outcomes.raised_result("c1", lookup, TimeoutError())
    assert timed_out.status is ToolStatus.TIMEOUT and "timed out after 2 s" in timed_out.content
    failed = outcomes.raised_result("c2", lookup, KeyError("k"))
    assert failed.status is ToolStatus.ERROR and "KeyError: 'k'" in failed.content


def test_a_replayed_failure_is_answered_with_its_logged_text() -> None:
    logged = "Tool error: anything at all: even: colons\nand lines"
    again = outcomes.raised_result("c1", lookup, ReplayedToolError("x", result=logged))
    assert (again.status, again.content) == (ToolStatus.ERROR, logged)
    slow = ReplayedToolError("x", result="late", timed_out=True)
    assert outcomes.raised_result("c2", lookup, slow).status is ToolStatus.TIMEOUT


def test_resumable_outcomes() -> None:
    assert outcomes.is_resumable("paused") and outcomes.is_resumable("interrupted")
    assert outcomes.is_resumable("error", ProtocolError("cut"))
    assert not outcomes.is_resumable("error", ToolExecutionError("bad"))
    assert not outcomes.is_resumable("ok") and not outcomes.is_resumable("length")
