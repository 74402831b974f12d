"""``ToolContext``: what toolwire hands a tool about the call it is running.

A tool asks for it by annotating one parameter ``ToolContext``; that parameter is
filled in by the executor and left out of the JSON Schema (the model never sees it).
The context says which run and call this is, gives the call an idempotency key, the
run's ``deps`` (``Agent(deps=...)``), and ``progress(value)`` to report progress.

The idempotency key is :func:`idempotency_key`, a pure function of the run id and the
call's round and position in its turn — the one place it is derived. It never uses
the provider's call id (some servers repeat ids such as ``call_0`` in every turn): a
retry of the call, a batch re-run and a run resumed from the audit log (same run id,
same round, same position) all get the same key; any other call gets another one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["ProgressReport", "ToolContext", "idempotency_key"]

ProgressReport = Callable[[Any], None]
"""Receives each ``ToolContext.progress`` value (the run turns it into an event)."""

# A fixed namespace: the same (run, round, position) gives the same key in any process.
_KEY_NAMESPACE = uuid.UUID("6f0b2c1e-5d8a-4c33-9e07-2a41b7d95c10")


def idempotency_key(run_id: str, round: int, position: int) -> str:
    """The idempotency key of the call at ``position`` (0-based, in call order) of
    round ``round`` (1-based, as the run's events number rounds) of run ``run_id``.

    A UUID (version 5, name-based): deterministic, 36 characters, accepted where
    payment and mail APIs ask for an ``Idempotency-Key``.
    """
    return str(uuid.uuid5(_KEY_NAMESPACE, f"{run_id}\x1f{round}\x1f{position}"))


def _drop(value: Any) -> None:
    """The report of a context nobody listens to."""


class ToolContext:
    """The call a tool is running, filled in for a parameter annotated ``ToolContext``.

    Attributes:
        run_id: The run's id (``RunResult.run_id``; the audit log's key).
        call_id: The provider's id of the call (for messages and logs; not unique
            across turns on every server — use ``idempotency_key`` for side effects).
        idempotency_key: The same on every retry of this call and after a resume,
            different for every other call (:func:`idempotency_key`). Pass it to an
            API that takes one, so that a repeated request takes effect once.
        deps: Whatever was given as ``Agent(deps=...)`` (``None`` without).
    """

    __slots__ = ("_report", "call_id", "deps", "idempotency_key", "run_id")

    def __init__(
        self,
        run_id: str,
        call_id: str,
        idempotency_key: str,
        deps: Any = None,
        report: ProgressReport | None = None,
    ) -> None:
        self.run_id = run_id
        self.call_id = call_id
        self.idempotency_key = idempotency_key
        self.deps = deps
        self._report = report or _drop

    def progress(self, value: Any) -> None:
        """Report progress: a ``toolwire.ToolProgress`` event on the run's stream, the
        live view and the audit log, now. Safe from a sync tool's worker thread."""
        self._report(value)

    def __repr__(self) -> str:
        # deps may hold clients and secrets: named by type only.
        return (
            f"ToolContext(run_id={self.run_id!r}, call_id={self.call_id!r}, "
            f"idempotency_key={self.idempotency_key!r}, deps={type(self.deps).__name__})"
        )
