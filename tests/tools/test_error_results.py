"""The error results a failed call gets (toolwire.tools.error_results)."""

from __future__ import annotations

import pytest

from toolwire.errors import CallerError
from toolwire.messages import ToolStatus
from toolwire.tools import error_result, failure_result, tool


@tool(timeout=2.5)
def lookup(key: str) -> str:
    """Look up."""
    return key


def test_error_result_for_invalid_call():
    validation = lookup.validate('{"key": 5, "extra": 1}')
    result = error_result("call_1", validation)
    assert result.call_id == "call_1" and result.name == "lookup"
    assert result.status is ToolStatus.ERROR and result.content == validation.message
    with pytest.raises(CallerError):
        error_result("c", lookup.validate('{"key": "x"}'))


def test_failure_result_for_failed_and_timed_out_calls():
    failed = failure_result("c1", "lookup", ValueError("no such key"), tool=lookup)
    assert failed.status is ToolStatus.ERROR
    assert "ValueError: no such key" in failed.content
    # the arguments were valid: no schema, which would say they were wrong
    assert "JSON Schema" not in failed.content
    slow = failure_result("c2", "lookup", TimeoutError(), tool=lookup, status=ToolStatus.TIMEOUT)
    assert slow.status is ToolStatus.TIMEOUT and "timed out after 2.5 s" in slow.content
    assert "JSON Schema" not in failure_result("c3", "x", "denied by policy").content
    with pytest.raises(CallerError):
        failure_result("c4", "x", "r", status=ToolStatus.OK)
