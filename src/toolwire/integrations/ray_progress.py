"""A ``RayBackend`` call's ``ToolContext`` and progress: shipped to the worker, relayed back.

A tool that takes a ``ToolContext`` or is a generator (not ``Tool.plain``) needs, in the
worker, the parts of its context that are data — run id, call id, idempotency key,
``deps`` (which must pickle) — and a way to report progress. :class:`ShippedContext`
carries the data and a relay actor (:class:`~toolwire.integrations.ray_relay.Relay`);
in the worker, :func:`run_with_context` rebuilds the ``ToolContext``, runs the tool as
the executor would (a generator through :mod:`toolwire.run.progress`), posts each
progress value to the relay under the call's key, and returns only once every post
has landed. In the driver, a :class:`Receiver` takes the call's values from the relay
while the task runs and hands each to the driver-side context, so the run's stream
gets them in order, before the call's result. (An async actor does not promise to run
posts in the order they were sent: each value is numbered, and the receiver holds back
any that arrive before an earlier one.)
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from ..errors import BackendError
from ..run.progress import drive_async, drive_sync, progress_text
from ..tools.context import ToolContext
from ..tools.tool import Tool

__all__ = ["Receiver", "ShippedContext", "check_deps", "run_with_context", "ship"]

_WAKE = 1.0  # seconds a take waits on the relay before the pump asks again


@dataclass(frozen=True)
class ShippedContext:
    """What of a ``ToolContext`` travels to the worker (see the module docstring)."""

    run_id: str
    call_id: str
    idempotency_key: str
    deps: Any
    relay: Any
    key: str


def ship(context: ToolContext, relay: Any) -> ShippedContext:
    """The context's data and the relay, under a key of the call's own."""
    return ShippedContext(
        context.run_id,
        context.call_id,
        context.idempotency_key,
        context.deps,
        relay,
        uuid.uuid4().hex,
    )


def check_deps(deps: Any, cloudpickle: Any) -> None:
    """``deps`` must pickle to reach a worker.

    Raises:
        BackendError: It does not (the cause named).
    """
    try:
        cloudpickle.dumps(deps)
    except Exception as exc:  # cloudpickle raises many kinds; all mean "cannot ship this"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendError(
            f"Agent(deps=...) cannot be pickled for a Ray worker ({type(deps).__name__}: {first[:200]})",
            hint="pass deps that pickle (settings, addresses); create clients and "
            "connections inside the tool",
        ) from exc


class Receiver:
    """In the driver: one call's relayed progress, handed to its context in order."""

    def __init__(self, shipped: ShippedContext, context: ToolContext) -> None:
        self._relay = shipped.relay
        self._key = shipped.key
        self._context = context
        self._taken = 0  # values taken from the relay so far
        self._next = 0  # the number of the next value to hand on
        self._held: dict[int, Any] = {}

    async def pump(self) -> None:
        """Take and hand on values until cancelled (while the task runs)."""
        while True:
            self._hand_on(await self._relay.take_progress.remote(self._key, self._taken, _WAKE))

    async def drain(self) -> None:
        """The last values (every post landed before the task returned)."""
        try:
            self._hand_on(await self._relay.take_progress.remote(self._key, self._taken, 0))
        finally:
            self._relay.forget.remote(self._key)

    def _hand_on(self, numbered: list[tuple[int, Any]]) -> None:
        self._taken += len(numbered)
        self._held.update(numbered)
        while self._next in self._held:
            self._context.progress(self._held.pop(self._next))
            self._next += 1


class _WorkerReport:
    """In the worker: posts each progress value to the relay, then waits for the posts."""

    def __init__(self, shipped: ShippedContext) -> None:
        self._shipped = shipped
        self._sent: list[Any] = []
        self._lock = threading.Lock()  # a sync tool may report from its own threads

    def __call__(self, value: Any) -> None:
        relay, key = self._shipped.relay, self._shipped.key
        with self._lock:  # numbered in the order reported
            number = len(self._sent)
            try:
                ref = relay.post_progress.remote(key, [(number, value)])
            except Exception:  # the value does not pickle: its text does
                ref = relay.post_progress.remote(key, [(number, progress_text(value))])
            self._sent.append(ref)

    def finish(self) -> None:
        import ray

        with self._lock:
            sent = list(self._sent)
        with contextlib.suppress(Exception):  # a lost post must not lose the result
            ray.get(sent)


def run_with_context(tool: Tool, value: Any, shipped: ShippedContext) -> Any:
    """Run one call in the worker, its context rebuilt and its progress relayed."""
    report = _WorkerReport(shipped)
    context = ToolContext(
        shipped.run_id, shipped.call_id, shipped.idempotency_key, shipped.deps, report
    )
    try:
        if tool.generator == "async":
            return asyncio.run(_drive(tool, value, context, report))
        if tool.generator == "sync" or not tool.is_async:
            return drive_sync(tool, value, context, report, threading.Event())
        return asyncio.run(tool.invoke(value, context))
    finally:
        report.finish()


async def _drive(tool: Tool, value: Any, context: ToolContext, report: _WorkerReport) -> Any:
    return await drive_async(tool, tool.invoke(value, context), report)
