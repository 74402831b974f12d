"""Batch planning: which calls of a turn may run together. Pure.

The rule: walk the calls in the order the
model emitted them; consecutive concurrency-safe calls form one parallel batch, and a
call that is not concurrency-safe runs alone, after everything before it and before
everything after it. Calls with side effects therefore happen in call order, and a
read the model placed after a write sees the write.

Only executable calls are planned; calls that failed validation are never run, so
they take no part (they neither split nor join a batch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Batch", "plan_batches"]


@dataclass(frozen=True, slots=True)
class Batch:
    """Calls that run together.

    Attributes:
        calls: Positions in the planned sequence, ascending.
        parallel: Whether the calls run concurrently (every call in a batch of more
            than one is concurrency-safe; a lone call is never "parallel").
    """

    calls: tuple[int, ...]
    parallel: bool


def plan_batches(safe: Sequence[bool]) -> list[Batch]:
    """Split calls into batches, preserving order.

    Args:
        safe: For each call, in call order, whether it is concurrency-safe.

    Returns:
        The batches, in execution order; every position appears exactly once.
    """
    batches: list[Batch] = []
    run: list[int] = []
    for position, is_safe in enumerate(safe):
        if is_safe:
            run.append(position)
            continue
        _close(batches, run)
        batches.append(Batch((position,), parallel=False))
    _close(batches, run)
    return batches


def _close(batches: list[Batch], run: list[int]) -> None:
    """Turn the pending run of safe calls into a batch (and empty it)."""
    if run:
        batches.append(Batch(tuple(run), parallel=len(run) > 1))
        run.clear()
