"""Tools: functions with schemas and policy, validation, JSON repair and error feedback.

Pure and synchronous throughout: nothing here runs a tool or touches the network. The
executor (``toolwire.run``) builds on :class:`Tool`, :class:`Toolset` and
:class:`Validation`; the agent loop on :class:`FailureBudget` and
:class:`RunDiagnostics`.
"""

from __future__ import annotations

from ..errors import BudgetExceededError, SchemaExtraMissingError, ToolBudgetExceededError
from .diagnostics import (
    FAILURE_KINDS,
    FAILURE_LABELS,
    Failure,
    FailureKind,
    RunDiagnostics,
    classify,
)
from .docstrings import DocInfo, parse_docstring
from .feedback import (
    DEFAULT_BREAKER,
    DEFAULT_BUDGETS,
    BudgetExceeded,
    FailureBudget,
    RetryPolicy,
    ToolBudgetExceeded,
    error_result,
    failure_content,
    failure_result,
)
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
