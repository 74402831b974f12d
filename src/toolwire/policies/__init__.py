"""Run policies: the pure rules that decide when a run warns, retries or stops.

Pure and synchronous (no I/O, no asyncio): the agent loop (``toolwire.run``) feeds them
what happened and acts on their verdicts, so each rule is tested without running a
model or a tool.

* :mod:`.budgets` — ``RetryPolicy`` and ``FailureBudget``: retries per failure class and
  the per-tool breaker (``BudgetExceeded``).
* :mod:`.diagnostics` — ``RunDiagnostics``: every failed call classified and counted.
* :mod:`.loops` — ``LoopPolicy`` and ``LoopDetector``: a model that repeats itself is
  warned, then stopped (``LoopDetected``).
* :mod:`.limits` — ``UsageLimits``: caps on requests, tool calls and tokens
  (``UsageLimitExceeded``).
"""

from __future__ import annotations

from .budgets import (
    DEFAULT_BREAKER,
    DEFAULT_BUDGETS,
    BudgetExceeded,
    FailureBudget,
    RetryPolicy,
    ToolBudgetExceeded,
)
from .diagnostics import (
    FAILURE_KINDS,
    FAILURE_LABELS,
    Failure,
    FailureKind,
    RunDiagnostics,
    classify,
)
from .limits import UsageLimitExceeded, UsageLimits
from .loops import (
    LoopDetected,
    LoopDetector,
    LoopPolicy,
    LoopVerdict,
    LoopWarningNote,
    call_signature,
    request_signature,
)

__all__ = [
    "DEFAULT_BREAKER",
    "DEFAULT_BUDGETS",
    "FAILURE_KINDS",
    "FAILURE_LABELS",
    "BudgetExceeded",
    "Failure",
    "FailureBudget",
    "FailureKind",
    "LoopDetected",
    "LoopDetector",
    "LoopPolicy",
    "LoopVerdict",
    "LoopWarningNote",
    "RetryPolicy",
    "RunDiagnostics",
    "ToolBudgetExceeded",
    "UsageLimitExceeded",
    "UsageLimits",
    "call_signature",
    "classify",
    "request_signature",
]
