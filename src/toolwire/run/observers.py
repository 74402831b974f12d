"""Observers of a run: the audit log and OpenTelemetry listen here; the loop needs neither.

A *hook* (``Agent(log=...)``, ``Agent(instrument=True)``) is asked once per run for a
*listener*, handing it the run's :class:`~toolwire.run.events.RunStarted`; the listener
then gets every event the run emits and finally one
:class:`~toolwire.run.events.RunEnded`. A listener may also have an ``async settle()``,
awaited before each model request and after the ``RunEnded`` of a run that ended well:
where it waits for its own I/O without blocking the event loop. A hook that must fail the run (strict logging)
raises from ``begin``, before the first model request; a listener handles its own
errors, so an observer never decides how a run goes.

The observers live in :mod:`toolwire.observe`, above ``run`` in the import order, and
``run/`` imports nothing of them: :class:`RunHook` is what it needs from an audit log
(``toolwire.AuditLog`` implements it), and a log path or ``instrument=True`` is made
into a hook by the composition root (:mod:`toolwire.resolve`, reached through
``run/_upward.py``).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import CallerError
from ..messages import Message, Usage
from ..tooldef import ToolDef
from ..tools.outcomes import RunOutcome
from ._upward import upward
from .events import ObservedEvent, RunEnded, RunEvent, RunStarted

__all__ = ["Observation", "RunHook", "RunListener", "new_run_id", "resolve_hooks"]

RunListener = Callable[[ObservedEvent], None]
"""Receives one run's events, then its ``RunEnded``."""


@runtime_checkable
class RunHook(Protocol):
    """Something that observes runs: asked for a listener at the start of each run."""

    def begin(self, start: RunStarted) -> RunListener:
        """A listener for the run that starts (raise here to stop it before it begins)."""
        ...


def new_run_id() -> str:
    """A fresh run id: 32 hex digits, random, so that short prefixes are unambiguous.

    The 16 random bytes written out, not a ``uuid.uuid4()``'s ``hex``: the same digits
    (less the version's four fixed bits) without the ``UUID`` object, whose Python
    ``__init__`` was most of what making an id cost (the context's cache key, the
    other id of every run, is made the same way: ``toolwire.context.session``)."""
    return os.urandom(16).hex()


def resolve_hooks(log: object, instrument: object) -> tuple[RunHook, ...]:
    """The hooks that ``Agent(log=..., instrument=...)`` asks for.

    Args:
        log: ``None``, an ``AuditLog`` (or any :class:`RunHook`), or a path to one.
        instrument: Whether to emit OpenTelemetry spans.

    Raises:
        CallerError: ``log`` or ``instrument`` has the wrong type, or the
            ``opentelemetry-api`` package is missing.
    """
    hooks: list[RunHook] = []
    if isinstance(log, (str, os.PathLike)):
        hooks.append(upward().audit_log(log))
    elif isinstance(log, RunHook):
        hooks.append(log)
    elif log is not None:
        raise CallerError(
            f"log={log!r} is neither an AuditLog nor a path",
            hint="pass toolwire.AuditLog(path), a path such as 'runs.db', or None",
        )
    if not isinstance(instrument, bool):
        raise CallerError(f"instrument must be a bool, not {instrument!r}")
    if instrument:
        hooks.append(upward().instrumentation())
    return tuple(hooks)


class Observation:
    """The listeners of one run, fed alongside the run's own emitter."""

    def __init__(self, listeners: Sequence[RunListener], run_id: str) -> None:
        self._listeners = tuple(listeners)
        self._run_id = run_id

    @classmethod
    def begin(
        cls,
        hooks: Sequence[RunHook],
        *,
        run_id: str,
        model: str,
        tools: list[ToolDef],
        settings: dict[str, Any],
        messages: list[Message],
        resumed: bool = False,
    ) -> Observation:
        """Ask every hook for its listener (a strict hook may raise here)."""
        start = RunStarted(run_id, model, tools, settings, list(messages), time.time(), resumed)
        return cls([hook.begin(start) for hook in hooks], run_id)

    def wrap(self, emit: Callable[[RunEvent], None]) -> Callable[[RunEvent], None]:
        """An emitter that tells the listeners first, then ``emit``."""
        listeners = self._listeners

        def both(event: RunEvent) -> None:
            for listener in listeners:
                listener(event)
            emit(event)

        return both

    async def settle(self) -> None:
        """Let each listener that has one run its ``async settle()`` (the audit log
        waits there, off the event loop, for its writer): before each model request
        and after a run that ended well (a failed run's listeners get no settle)."""
        for listener in self._listeners:
            settle = getattr(listener, "settle", None)
            if settle is not None:
                await settle()

    def end(
        self,
        *,
        result: Any,
        error: BaseException | None,
        rounds: int,
        requests: int,
        usage: Usage,
    ) -> None:
        """Tell the listeners how the run ended."""
        outcome: RunOutcome
        if error is None:
            outcome = "ok" if result is None else result.outcome  # ok, length or paused
        elif isinstance(error, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
            outcome = "cancelled"
        else:
            outcome = "error"
        ended = RunEnded(self._run_id, outcome, time.time(), result, error, rounds, requests, usage)
        for listener in self._listeners:
            listener(ended)
