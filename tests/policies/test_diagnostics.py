"""Failure classification and per-run counts."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from toolwire.errors import CallerError, RepairError, ToolExecutionError
from toolwire.policies.diagnostics import FAILURE_KINDS, RunDiagnostics, classify, new_counter
from toolwire.tools import Validation, tool


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def test_classify_validations_and_exceptions():
    assert classify(add.validate('{"a": 1, "b": 2}')) is None
    assert classify(add.validate('{"a": 1}')) == "missing_required"
    assert classify(TimeoutError()) == "timeout"
    assert classify(RepairError("x")) == "invalid_json"
    assert classify(ToolExecutionError("x")) == "tool_error"
    assert classify(ValueError("x")) == "tool_error"
    assert classify(asyncio.CancelledError()) is None


def test_counts_per_kind_and_tool():
    diag = RunDiagnostics()
    diag.record_validation(add.validate('{"a": 1, "b": 2}'))
    diag.record_validation(add.validate("{'a': 1, 'b': 2}", repair_policy="always"))
    diag.record_validation(add.validate('{"a": 1}'), call_id="c1")
    diag.record_validation(add.validate('{"a": 1, "b": 2, "c": 3}'))
    diag.record("loop", "add", "same call three times")
    diag.record("unknown_tool", "sub")
    assert diag.valid == 2 and diag.total == 4
    assert diag.counts == {
        "missing_required": 1,
        "unexpected_parameter": 1,
        "loop": 1,
        "unknown_tool": 1,
    }
    assert diag.by_tool["add"]["loop"] == 1 and diag.by_tool["sub"] == {"unknown_tool": 1}
    assert diag.repaired["add"] == 1
    assert diag.failures[0].call_id == "c1"
    json.dumps(diag.as_dict())
    summary = diag.summary()
    assert "| hallucinated parameter | 1 |" in summary and "1 repaired" in summary


def test_unknown_kind_is_a_caller_error():
    with pytest.raises(CallerError):
        RunDiagnostics().record("oops", "t")


def test_all_validation_kinds_are_failure_kinds():
    kinds = {
        "invalid_json",
        "schema_violation",
        "missing_required",
        "unexpected_parameter",
        "unknown_tool",
        "empty_call",
        "loop",
    }
    assert kinds <= set(FAILURE_KINDS)
    v = Validation.failure("t", "empty_call", "m")
    diag = RunDiagnostics()
    assert diag.record_validation(v) is not None and diag.counts == {"empty_call": 1}


def test_each_run_counts_repairs_in_a_counter_of_its_own():
    one, two = RunDiagnostics(), RunDiagnostics()
    one.repaired["search"] += 1
    assert one.repaired == Counter(search=1) and isinstance(one.repaired, Counter)
    assert two.repaired == Counter() and two.repaired is not one.repaired
    counts = new_counter()
    counts.update(["a", "b", "a"])
    assert counts.most_common(1) == [("a", 2)] and new_counter() == Counter()
