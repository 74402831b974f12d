"""Failure diagnostics: every failed call classified and counted, per run.

The classes are the common ways tool calling fails —
wrong or unknown tool, hallucinated parameter, JSON error, missing required
parameter, empty call, loops — plus what execution adds (a tool that raised, timed
out, or was denied) and ``empty_turn``: a turn whose finish reason says tool calls but
that holds none (``empty_call`` stays a call without arguments). A :class:`RunDiagnostics` is a plain, synchronous counter the
agent loop feeds; the CLI prints its :meth:`~RunDiagnostics.summary` and the audit log
stores :meth:`~RunDiagnostics.as_dict`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, get_args

from ..errors import CallerError, RepairError
from ..tools.validate import Validation

__all__ = [
    "FAILURE_KINDS",
    "FAILURE_LABELS",
    "Failure",
    "FailureKind",
    "RunDiagnostics",
    "classify",
]

FailureKind = Literal[
    "invalid_json",
    "schema_violation",
    "missing_required",
    "unexpected_parameter",
    "unknown_tool",
    "empty_call",
    "loop",
    "tool_error",
    "timeout",
    "denied",
    "empty_turn",
    "no_output",
]

FAILURE_KINDS: tuple[FailureKind, ...] = get_args(FailureKind)

FAILURE_LABELS: dict[FailureKind, str] = {
    "invalid_json": "JSON error",
    "schema_violation": "argument violates the schema",
    "missing_required": "missing required parameter",
    "unexpected_parameter": "hallucinated parameter",
    "unknown_tool": "wrong or unknown tool",
    "empty_call": "empty call",
    "loop": "loop (same call repeated)",
    "tool_error": "tool raised an error",
    "timeout": "tool timed out",
    "denied": "call denied",
    "empty_turn": "finish reason said tool calls, but the turn had none",
    "no_output": "answered without the structured output (final_result)",
}
"""A human label per class, for the CLI and reports."""


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed call.

    Attributes:
        kind: Its class.
        tool: The tool name the model used.
        message: The reason (what the model was told).
        call_id: The provider's call id, when known.
        round: The model request (1-based) whose turn made the call, when known: call
            ids are unique only within a turn (some servers send ``call_0`` every turn),
            so a call is known by ``(round, call_id)``.
    """

    kind: FailureKind
    tool: str
    message: str = ""
    call_id: str | None = None
    round: int | None = None


def classify(outcome: Validation | BaseException) -> FailureKind | None:
    """The failure class of a validation result or an exception from execution.

    Args:
        outcome: A :class:`Validation` (``None`` is returned when it is ok) or the
            exception a call ended with.

    Returns:
        The class, or ``None`` for a valid call or a cancellation.
    """
    if isinstance(outcome, Validation):
        return outcome.kind
    if isinstance(outcome, TimeoutError):
        return "timeout"
    if isinstance(outcome, RepairError):
        return "invalid_json"
    if isinstance(outcome, Exception):
        return "tool_error"
    return None  # cancellation (a BaseException) is not the call's failure


def _check_kind(kind: str) -> FailureKind:
    if kind not in FAILURE_KINDS:
        raise CallerError(
            f"unknown failure kind {kind!r}", hint=f"use one of {', '.join(FAILURE_KINDS)}"
        )
    return kind


new_counter: Callable[[], Counter[str]] = partial(Counter.__new__, Counter)
"""An empty ``Counter``, made in C: ``Counter()`` calls two Python functions (its
``__init__``, then an ``update`` with nothing), and every run makes two Counters (its
diagnostics' and its loop detector's), two distinct functions the run touches."""


@dataclass
class RunDiagnostics:
    """Counts of failed, repaired and valid calls over one run.

    Attributes:
        failures: Every failure, in order.
        repaired: Tool name → number of calls whose JSON was repaired.
        valid: Number of calls that passed validation.
    """

    failures: list[Failure] = field(default_factory=list)
    repaired: Counter[str] = field(default_factory=new_counter)
    valid: int = 0

    def record(
        self,
        kind: str,
        tool: str,
        message: str = "",
        *,
        call_id: str | None = None,
        round: int | None = None,
    ) -> Failure:
        """Count one failure.

        Raises:
            CallerError: ``kind`` is not one of :data:`FAILURE_KINDS`.
        """
        failure = Failure(_check_kind(kind), tool, message, call_id, round)
        self.failures.append(failure)
        return failure

    def record_validation(
        self, validation: Validation, *, call_id: str | None = None, round: int | None = None
    ) -> Failure | None:
        """Count a validation outcome: a failure, or a valid (possibly repaired) call."""
        if validation.repaired:
            self.repaired[validation.tool] += 1
        if validation.ok or validation.kind is None:
            self.valid += 1
            return None
        return self.record(
            validation.kind, validation.tool, validation.message, call_id=call_id, round=round
        )

    @property
    def counts(self) -> dict[FailureKind, int]:
        """Failure class → count (classes with no failures left out)."""
        return dict(Counter(f.kind for f in self.failures))

    @property
    def by_tool(self) -> dict[str, dict[FailureKind, int]]:
        """Tool name → failure class → count."""
        table: dict[str, dict[FailureKind, int]] = {}
        for failure in self.failures:
            row = table.setdefault(failure.tool, {})
            row[failure.kind] = row.get(failure.kind, 0) + 1
        return table

    @property
    def total(self) -> int:
        """Number of failures."""
        return len(self.failures)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready record for the audit log."""
        return {
            "valid": self.valid,
            "failures": self.total,
            "counts": self.counts,
            "by_tool": self.by_tool,
            "repaired": dict(self.repaired),
        }

    def summary(self) -> str:
        """A short Markdown table of the failure classes seen, for the CLI."""
        lines = ["| failure | count |", "|---|---|"]
        counts = self.counts
        lines += [f"| {FAILURE_LABELS[k]} | {counts[k]} |" for k in FAILURE_KINDS if k in counts]
        repaired = sum(self.repaired.values())
        lines.append(f"\n{self.valid} valid call(s), {repaired} repaired, {self.total} failed")
        return "\n".join(lines)
