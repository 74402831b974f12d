"""Retry budgets: how many failed calls a run tolerates before it stops.

An invalid or failed call is never a crash: it becomes that call's error
:class:`~toolwire.messages.ToolResult` (:mod:`toolwire.tools.outcomes`), and the
model gets another turn. How many turns is bounded two ways, both pure and synchronous
for the agent loop to call:

* a retry budget per failure class for the whole run (:data:`DEFAULT_BUDGETS`): a
  budget of N lets the model retry N times after failures of that class, and the
  next failure stops the run;
* a per-tool breaker: N consecutive failures of one tool (any class) stop the run,
  even when no single class has run out.

Stopping raises :class:`BudgetExceededError`, naming the tool, the class and the last
message the model was sent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from ..checks import check_int
from ..errors import (
    BudgetExceededError,
    CallerError,
    ToolBudgetExceededError,
)
from .diagnostics import FAILURE_KINDS, FailureKind

__all__ = [
    "DEFAULT_BREAKER",
    "DEFAULT_BUDGETS",
    "FailureBudget",
    "RetryPolicy",
]

DEFAULT_BUDGETS: Mapping[FailureKind, int] = MappingProxyType(
    {
        "invalid_json": 3,
        "schema_violation": 3,
        "missing_required": 3,
        "unexpected_parameter": 3,
        "empty_call": 2,
        "unknown_tool": 1,
        "loop": 1,
        "tool_error": 3,
        "timeout": 2,
        "denied": 3,
        "no_output": 2,
    }
)
"""Retries allowed per failure class in one run.

Argument errors (JSON, schema, missing, hallucinated parameters) get 3: the error
message carries the schema, and a model that has not fixed a call after three precise
explanations rarely does. An unknown tool and a detected loop get 1: the closest
names are listed once, and a repeated identical call means the model is stuck.
``no_output`` (a run with an ``output_type`` answered in text, not through
``final_result``) gets 2.
"""

DEFAULT_BREAKER = 5
"""Consecutive failures of one tool, of any class, that stop the run."""

_TOOL_KINDS = frozenset({"tool_error", "timeout"})


@dataclass(frozen=True)
class RetryPolicy:
    """How many failures the run tolerates.

    Attributes:
        budgets: Failure class → retries allowed in one run; classes left out use
            :data:`DEFAULT_BUDGETS`.
        breaker: Consecutive failures of one tool that stop the run (0 disables it).
    """

    budgets: Mapping[str, int] = field(default_factory=dict)
    breaker: int = DEFAULT_BREAKER

    def __post_init__(self) -> None:
        for kind, value in self.budgets.items():
            if kind not in FAILURE_KINDS:
                raise CallerError(
                    f"RetryPolicy: unknown failure class {kind!r}",
                    hint=f"use one of {', '.join(FAILURE_KINDS)}",
                )
            check_int(f"RetryPolicy: budget for {kind}", value)
        check_int("RetryPolicy: breaker", self.breaker)

    def budget(self, kind: FailureKind) -> int:
        """The retries allowed for ``kind``."""
        return self.budgets.get(kind, DEFAULT_BUDGETS[kind])


class FailureBudget:
    """Counts failures of one run against a :class:`RetryPolicy`.

    Call :meth:`record` for every failed call and :meth:`record_success` for every
    call that succeeded (it resets that tool's breaker). After :meth:`begin_round`,
    failures count per round: a round with any failure of a class is one retry of that
    class, and one failure towards each failing tool's breaker, however many parallel
    calls failed (the agent loop works this way). Without it, every failure counts.
    """

    def __init__(self, policy: RetryPolicy | None = None) -> None:
        self.policy = policy or RetryPolicy()
        # Counts that start at 0, as Counters would; a defaultdict is made in C (a
        # Counter's Python __init__ was most of what a run's budget cost to set up).
        self._by_kind: defaultdict[str, int] = defaultdict(int)
        self._streak: defaultdict[str, int] = defaultdict(int)
        self._round: set[str] | None = None  # classes and tools counted in this round

    def begin_round(self) -> None:
        """Start a round: from now on each class and tool counts once per round."""
        self._round = set()

    def _first_in_round(self, key: str) -> bool:
        if self._round is None:
            return True
        if key in self._round:
            return False
        self._round.add(key)
        return True

    def record(self, kind: str, tool: str, message: str = "") -> None:
        """Count one failure; raise when its class's budget or the tool's breaker is spent.

        Raises:
            BudgetExceededError: The run must stop (``ToolBudgetExceededError`` when the last
                failure was the tool's own).
            CallerError: ``kind`` is not a failure class.
        """
        if kind not in FAILURE_KINDS:
            raise CallerError(f"unknown failure class {kind!r}")
        checked: FailureKind = kind
        if self._first_in_round(f"kind:{kind}"):
            self._by_kind[kind] += 1
        if self._first_in_round(f"tool:{tool}"):
            self._streak[tool] += 1
        limit = self.policy.budget(checked)
        if self._by_kind[kind] > limit:
            raise self._stop(
                tool=tool,
                kind=checked,
                message=message,
                count=self._by_kind[kind],
                limit=limit,
                reason="budget",
            )
        breaker = self.policy.breaker
        if breaker and self._streak[tool] >= breaker:
            raise self._stop(
                tool=tool,
                kind=checked,
                message=message,
                count=self._streak[tool],
                limit=breaker,
                reason="breaker",
            )

    def record_success(self, tool: str) -> None:
        """A call of ``tool`` succeeded: its consecutive-failure count starts over."""
        self._streak.pop(tool, None)

    def record_successes(self, tools: Iterable[str]) -> None:
        """:meth:`record_success` for each of ``tools`` (a round in which every call
        succeeded: nothing to do unless a tool was failing)."""
        streak = self._streak
        if streak:
            for tool in tools:
                streak.pop(tool, None)

    def used(self, kind: FailureKind) -> int:
        """Failures of ``kind`` counted so far."""
        return self._by_kind[kind]

    def remaining(self, kind: FailureKind) -> int:
        """Retries left for ``kind`` (0 means the next failure stops the run)."""
        return max(0, self.policy.budget(kind) - self._by_kind[kind])

    @staticmethod
    def _stop(
        *,
        tool: str,
        kind: FailureKind,
        message: str,
        count: int,
        limit: int,
        reason: Literal["budget", "breaker"],
    ) -> BudgetExceededError:
        cls = ToolBudgetExceededError if kind in _TOOL_KINDS else BudgetExceededError
        return cls(
            tool=tool, kind=kind, last_message=message, count=count, limit=limit, reason=reason
        )
