"""The round's accounting: a round of plain successes is recorded at once
(``_account_plain``), any other round call by call (``_account_each``). The fast path
must record exactly what the loop records, and be taken exactly when it may."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import BudgetExceededError
from toolwire.messages import ToolResult, ToolStatus
from toolwire.policies.budgets import FailureBudget
from toolwire.policies.diagnostics import RunDiagnostics
from toolwire.run.agent import _account_each, _account_plain, _all_plain
from toolwire.tools.validate import Validation

TOOLS = ("a", "b", "c")

call = st.tuples(
    st.sampled_from(TOOLS),
    st.booleans(),  # valid
    st.booleans(),  # repaired
    st.sampled_from(list(ToolStatus)),
)
# Failures recorded in earlier rounds: they leave failure streaks for the round to end.
earlier = st.lists(st.tuples(st.sampled_from(TOOLS), st.sampled_from(["tool_error", "timeout"])))


def _round(calls: list[tuple[str, bool, bool, ToolStatus]]) -> tuple[list, list]:
    validations, results = [], []
    for k, (tool, valid, repaired, status) in enumerate(calls):
        if valid:
            validations.append(Validation.success(tool, {"k": k}, repaired=repaired, original="{"))
        else:
            validations.append(
                Validation.failure(tool, "schema_violation", "no", repaired=repaired)
            )
        results.append(ToolResult(f"c{k}", tool, "text", status))
    return validations, results


def _states(before: list[tuple[str, str]]) -> tuple[RunDiagnostics, FailureBudget]:
    diagnostics, budget = RunDiagnostics(), FailureBudget()
    for tool, kind in before:
        budget.begin_round()
        try:
            budget.record(kind, tool)
        except BudgetExceededError:
            pass
    budget.begin_round()
    return diagnostics, budget


def _plain(validations: list[Validation], results: list[ToolResult]) -> bool:
    """The loop's own test for a call it records as a plain success, for every call."""
    return len(validations) == len(results) and all(
        v.ok and not v.repaired and r.status is ToolStatus.OK
        for v, r in zip(validations, results, strict=True)
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(call, max_size=8), earlier)
def test_a_plain_round_is_recorded_as_the_loop_records_it(calls, before) -> None:
    validations, results = _round(calls)
    assert _all_plain(validations, results) == _plain(validations, results)
    if not _plain(validations, results):
        return
    fast_diagnostics, fast_budget = _states(before)
    each_diagnostics, each_budget = _states(before)
    _account_plain(fast_diagnostics, fast_budget, results)
    assert _account_each(each_diagnostics, each_budget, validations, results, 1) is None
    assert fast_diagnostics == each_diagnostics
    assert vars(fast_budget) == vars(each_budget)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=8), earlier)
def test_plain_rounds_end_failure_streaks(tools, before) -> None:
    calls = [(tool, True, False, ToolStatus.OK) for tool in tools]
    validations, results = _round(calls)
    assert _all_plain(validations, results)
    diagnostics, budget = _states(before)
    _account_plain(diagnostics, budget, results)
    assert diagnostics.valid == len(tools)
    assert not set(tools) & {tool for tool, count in vars(budget)["_streak"].items() if count}
