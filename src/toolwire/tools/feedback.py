"""Split: retry budgets moved to :mod:`toolwire.policies.budgets`, error results to
:mod:`toolwire.tools.error_results`; this name keeps existing imports working."""

from __future__ import annotations

from ..errors import BudgetExceededError, ToolBudgetExceededError
from ..policies.budgets import (
    DEFAULT_BREAKER,
    DEFAULT_BUDGETS,
    BudgetExceeded,
    FailureBudget,
    RetryPolicy,
    ToolBudgetExceeded,
)
from .error_results import FAILURE_ADVICE, error_result, failure_content, failure_result

__all__ = [
    "BudgetExceededError",
    "ToolBudgetExceededError",
    "DEFAULT_BREAKER",
    "DEFAULT_BUDGETS",
    "FAILURE_ADVICE",
    "BudgetExceeded",
    "FailureBudget",
    "RetryPolicy",
    "ToolBudgetExceeded",
    "error_result",
    "failure_content",
    "failure_result",
]
