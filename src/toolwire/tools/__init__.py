"""Tools: functions with schemas and policy, validation, JSON repair and error results.

Pure and synchronous throughout: nothing here runs a tool or touches the network. The
executor (``toolwire.run``) builds on :class:`Tool`, :class:`Toolset` and
:class:`Validation`. The run policies that used to live here (retry budgets,
``RunDiagnostics``) are in :mod:`toolwire.policies`; their names are still exported
from here, lazily (a module above this layer is imported only when one is asked for).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import (
    BudgetExceeded,
    BudgetExceededError,
    SchemaExtraMissingError,
    ToolBudgetExceeded,
    ToolBudgetExceededError,
)
from .docstrings import DocInfo, parse_docstring
from .error_results import error_result, failure_content, failure_result
from .repair import loads_lenient, repair_json
from .schema import ToolDefinitionError, strict_schema
from .tool import ConcurrencyPolicy, Tool, Toolset, tool
from .validate import MISSING, Problem, RepairPolicy, SchemaExtraMissing, Validation, ValidationKind

__all__ = [
    "DEFAULT_BREAKER",
    "DEFAULT_BUDGETS",
    "FAILURE_KINDS",
    "FAILURE_LABELS",
    "MISSING",
    "BudgetExceeded",
    "BudgetExceededError",
    "Failure",
    "FailureBudget",
    "FailureKind",
    "RetryPolicy",
    "RunDiagnostics",
    "ToolBudgetExceeded",
    "ToolBudgetExceededError",
    "classify",
    "error_result",
    "failure_content",
    "failure_result",
    "ConcurrencyPolicy",
    "DocInfo",
    "Problem",
    "RepairPolicy",
    "SchemaExtraMissing",
    "SchemaExtraMissingError",
    "Tool",
    "ToolDefinitionError",
    "Toolset",
    "Validation",
    "ValidationKind",
    "loads_lenient",
    "parse_docstring",
    "repair_json",
    "strict_schema",
    "tool",
]

# Moved to toolwire.policies; kept here so that existing imports keep working. Loaded on
# first use (PEP 562): toolwire.policies imports this package, so an eager import here
# would be a cycle, and it keeps this layer from importing the one above it at run time.
_MOVED = {
    "DEFAULT_BREAKER": "budgets",
    "DEFAULT_BUDGETS": "budgets",
    "FailureBudget": "budgets",
    "RetryPolicy": "budgets",
    "FAILURE_KINDS": "diagnostics",
    "FAILURE_LABELS": "diagnostics",
    "Failure": "diagnostics",
    "FailureKind": "diagnostics",
    "RunDiagnostics": "diagnostics",
    "classify": "diagnostics",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"toolwire.policies.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


if TYPE_CHECKING:
    from ..policies.budgets import (
        DEFAULT_BREAKER,
        DEFAULT_BUDGETS,
        FailureBudget,
        RetryPolicy,
    )
    from ..policies.diagnostics import (
        FAILURE_KINDS,
        FAILURE_LABELS,
        Failure,
        FailureKind,
        RunDiagnostics,
        classify,
    )
