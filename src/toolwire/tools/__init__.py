"""Tools: functions with schemas and policy, validation, JSON repair and error results.

Pure and synchronous throughout: nothing here runs a tool or touches the network. The
executor (``toolwire.run``) builds on :class:`Tool`, :class:`Toolset` and
:class:`Validation`; the run policies (retry budgets, ``RunDiagnostics``) are in
:mod:`toolwire.policies`, and every error class in :mod:`toolwire.errors`.
"""

from __future__ import annotations

from .context import ToolContext, idempotency_key
from .docstrings import DocInfo, parse_docstring
from .outcomes import error_result, failure_content, failure_result
from .repair import loads_lenient, repair_json
from .schema import strict_schema
from .tool import ConcurrencyPolicy, Tool, Toolset, tool
from .validate import MISSING, Problem, RepairPolicy, Validation, ValidationKind

__all__ = [
    "MISSING",
    "ConcurrencyPolicy",
    "DocInfo",
    "Problem",
    "RepairPolicy",
    "Tool",
    "ToolContext",
    "Toolset",
    "Validation",
    "ValidationKind",
    "error_result",
    "failure_content",
    "failure_result",
    "idempotency_key",
    "loads_lenient",
    "parse_docstring",
    "repair_json",
    "strict_schema",
    "tool",
]
