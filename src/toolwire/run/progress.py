"""Tools that take a ``ToolContext`` or report progress: what the executor adds for them.

A tool is *plain* (``Tool.plain``, decided when it is defined) unless it has a
parameter annotated :class:`~toolwire.tools.context.ToolContext` or is a generator
function; plain calls never reach this module. For the others:

* :class:`ToolScope` is what the calls of one round share (run id, round number,
  ``deps``, where progress events go); the agent hands one to each turn.
* :class:`CallProgress` turns one call's progress values into
  :class:`~toolwire.run.events.ToolProgress` events, from the event loop or from a
  worker thread, and drops any that come after the call has its result.
* :func:`drive_sync` and :func:`drive_async` run a generator tool: each value it yields
  is reported when it yields again (only then is it known not to be the last; also
  when it raises or returns a value instead), the last is the result — a sync
  generator's non-``None`` return value takes precedence — and a generator that yields
  nothing is a :class:`~toolwire.errors.ResultError`.

Timeouts, cancellation and retries are the runner's, as for any tool: an async
generator is cancelled where it awaits; a sync generator runs in a worker thread that
is abandoned like any sync call's, and is closed at its next ``yield`` (where a plain
sync function could not be stopped at all).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ResultError
from ..tools.context import ToolContext, idempotency_key
from ..tools.tool import Tool
from .calls import TurnCall
from .events import ToolProgress
from .observers import new_run_id
from .results import render_content

__all__ = [
    "CallProgress",
    "ToolScope",
    "call_context",
    "drive_async",
    "drive_sync",
    "progress_text",
]

_NOTHING: Any = object()


@dataclass(frozen=True, slots=True)
class ToolScope:
    """What the calls of one round share.

    Attributes:
        run_id: The run's id.
        round: The round's number (1-based; ``ToolResultReady.round``).
        deps: ``Agent(deps=...)``.
        emit: Where progress events go (the run's stream and observers).
    """

    run_id: str
    round: int
    deps: Any = None
    emit: Callable[[ToolProgress], None] | None = None

    @classmethod
    def standalone(cls) -> ToolScope:
        """A turn run outside an agent (``Executor.execute``): a run of its own."""
        return cls(new_run_id(), 1)


class CallProgress:
    """One call's progress reporter (see the module docstring). Made on the event loop."""

    __slots__ = ("_call", "_loop", "_scope", "_thread")

    def __init__(self, scope: ToolScope, call: TurnCall) -> None:
        self._scope = scope
        self._call = call
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def __call__(self, value: Any) -> None:
        """Report ``value`` (from any thread)."""
        if threading.get_ident() == self._thread:
            self._emit(value)
        else:
            # A closed loop (RuntimeError): the run is over, nobody to tell.
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._emit, value)

    def _emit(self, value: Any) -> None:
        call, scope = self._call, self._scope
        if call.result is not None or scope.emit is None:
            return  # after its result (an abandoned thread still running): not news
        request = call.request
        scope.emit(ToolProgress(request.id, value, call.index, scope.round, request.name))


def call_context(
    scope: ToolScope, call: TurnCall, position: int, report: CallProgress
) -> ToolContext:
    """The ``ToolContext`` of the call at ``position`` in its turn."""
    key = idempotency_key(scope.run_id, scope.round, position)
    return ToolContext(scope.run_id, call.request.id, key, scope.deps, report)


def drive_sync(
    tool: Tool,
    value: Any,
    context: ToolContext | None,
    report: Callable[[Any], None],
    stop: threading.Event,
) -> Any:
    """Run a sync tool that takes a context or is a generator (in a worker thread)."""
    produced = tool.invoke(value, context)
    if tool.generator is None:
        return produced
    generator: Iterator[Any] = produced
    pending = _NOTHING
    try:
        while not stop.is_set():  # the call was given up (timeout, cancel): stop here
            try:
                item = next(generator)
            except StopIteration as end:
                if end.value is None:
                    return _last(tool, pending)
                _flush(pending, report)  # the return value is the result
                return end.value
            except Exception:
                _flush(pending, report)  # it failed: that value was not the result
                raise
            _flush(pending, report)
            pending = item
        return None  # nobody waits for it any more
    finally:
        close = getattr(generator, "close", None)
        if close is not None:
            close()


async def drive_async(
    tool: Tool, produced: AsyncIterator[Any], report: Callable[[Any], None]
) -> Any:
    """Run an async generator tool's generator to its result (on the event loop)."""
    pending = _NOTHING
    try:
        async for item in produced:
            _flush(pending, report)
            pending = item
    except Exception:
        _flush(pending, report)  # it failed: that value was not the result
        raise
    finally:
        aclose = getattr(produced, "aclose", None)
        if aclose is not None:
            await aclose()
    return _last(tool, pending)


def _flush(pending: Any, report: Callable[[Any], None]) -> None:
    """Report the value held back, if any: it is known not to be the result."""
    if pending is not _NOTHING:
        report(pending)


def _last(tool: Tool, pending: Any) -> Any:
    """The result: the last value yielded; none at all is the call's error."""
    if pending is _NOTHING:
        raise ResultError(
            f"the generator tool `{tool.name}` yielded nothing, so it has no result",
            hint="yield at least once: the last value a generator tool yields is its result",
        )
    return pending


def progress_text(value: Any) -> str:
    """A progress value as text, made as a result's is (:func:`render_content`); a value
    that has no text is named by its type (progress is never an error)."""
    try:
        return render_content(value)
    except ResultError:
        return f"(a {type(value).__name__} value, which has no text form)"
