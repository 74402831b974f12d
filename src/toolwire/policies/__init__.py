"""Run policies: the pure rules that decide when a run warns, retries or stops.

Pure and synchronous (no I/O, no asyncio): the agent loop (``toolwire.run``) feeds them
what happened and acts on their verdicts, so each rule is tested without running a
model or a tool.

* :mod:`.budgets` — ``RetryPolicy`` and ``FailureBudget``: retries per failure class and
  the per-tool breaker (``BudgetExceededError``).
* :mod:`.diagnostics` — ``RunDiagnostics``: every failed call classified and counted.
* :mod:`.loops` — ``LoopPolicy`` and ``LoopDetector``: a model that repeats itself is
  warned, then stopped (``LoopDetectedError``).
* :mod:`.limits` — ``UsageLimits``: caps on requests, tool calls and tokens
  (``UsageLimitExceededError``).
"""

from __future__ import annotations

from .budgets import (
    DEFAULT_BREAKER,
    DEFAULT_BUDGETS,
    FailureBudget,
    RetryPolicy,
)
from .diagnostics import (
    FAILURE_KINDS,
    FAILURE_LABELS,
    Failure,
    FailureKind,
    RunDiagnostics,
    classify,
)
from .limits import UsageLimits
from .loops import (
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
    "Failure",
    "FailureBudget",
    "FailureKind",
    "LoopDetector",
    "LoopPolicy",
    "LoopVerdict",
    "LoopWarningNote",
    "RetryPolicy",
    "RunDiagnostics",
    "UsageLimits",
    "call_signature",
    "classify",
    "request_signature",
]
