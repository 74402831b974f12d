"""Error results, retry budgets and the per-tool breaker."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import BudgetExceededError, CallerError, ToolBudgetExceededError
from toolwire.messages import ToolStatus
from toolwire.policies.budgets import DEFAULT_BUDGETS, FailureBudget, RetryPolicy
from toolwire.tools import error_result, failure_result, tool


@tool(timeout=2.5)
def lookup(key: str) -> str:
    """Look up."""
    return key


def test_documented_defaults():
    assert DEFAULT_BUDGETS["invalid_json"] == 3 and DEFAULT_BUDGETS["schema_violation"] == 3
    assert DEFAULT_BUDGETS["unknown_tool"] == 1
    assert RetryPolicy().breaker == 5


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


def test_budget_allows_n_retries_then_stops():
    budget = FailureBudget(RetryPolicy(budgets={"invalid_json": 2}, breaker=0))
    budget.record("invalid_json", "lookup", "first")
    budget.record("invalid_json", "lookup", "second")
    assert budget.remaining("invalid_json") == 0 and budget.used("invalid_json") == 2
    with pytest.raises(BudgetExceededError) as info:
        budget.record("invalid_json", "lookup", "Error: third\nmore")
    error = info.value
    assert (error.tool, error.kind, error.reason, error.count, error.limit) == (
        "lookup",
        "invalid_json",
        "budget",
        3,
        2,
    )
    assert "lookup" in str(error) and "invalid_json" in str(error) and "Error: third" in str(error)
    assert error.fault == "model"


def test_unknown_tool_budget_is_one_retry():
    budget = FailureBudget()
    budget.record("unknown_tool", "serch")
    with pytest.raises(BudgetExceededError):
        budget.record("unknown_tool", "serch")


def test_breaker_trips_on_consecutive_failures_of_one_tool():
    budget = FailureBudget(RetryPolicy(breaker=3))
    budget.record("schema_violation", "a")
    budget.record("missing_required", "a")
    budget.record("schema_violation", "b")
    with pytest.raises(BudgetExceededError) as info:
        budget.record("tool_error", "a", "boom")
    assert isinstance(info.value, ToolBudgetExceededError) and info.value.fault == "tool"
    assert info.value.reason == "breaker" and info.value.tool == "a"


def test_success_resets_the_breaker():
    budget = FailureBudget(RetryPolicy(breaker=2))
    budget.record("tool_error", "a")
    budget.record_success("a")
    budget.record("tool_error", "a")  # one consecutive failure again, not two


@pytest.mark.parametrize(
    "policy",
    [{"budgets": {"bogus": 1}}, {"budgets": {"loop": -1}}, {"breaker": 1.5}, {"breaker": True}],
)
def test_bad_policy_is_a_caller_error(policy):
    with pytest.raises(CallerError):
        RetryPolicy(**policy)


def test_unknown_kind_is_a_caller_error():
    with pytest.raises(CallerError):
        FailureBudget().record("bogus", "t")


@settings(max_examples=1000, deadline=None)
@given(st.permutations(["invalid_json"] * 3 + ["schema_violation"] * 3))
def test_any_order_of_failures_within_budget_passes(order: list[str]):
    budget = FailureBudget(RetryPolicy(breaker=0))
    for kind in order:
        budget.record(kind, "t")
