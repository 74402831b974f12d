"""Running one call to its result: permission, retries, thread or backend, timeout, text.

:class:`CallRunner` takes a valid call of a turn and returns its one
:class:`~toolwire.messages.ToolResult`: it asks the permission gate (once per call, even
when a batch budget makes the call run again), waits for any abandoned sync call this
one may not overlap, runs the tool (on the event loop, in a worker thread under the
thread cap, or on the execution backend) under its timeout, retries an idempotent
tool's retryable failures after a backoff, and turns the value into text (cut by the
context policy, the one place results are cut). Every result is built by :mod:`toolwire.tools.outcomes`.
A tool that takes a ``ToolContext`` or is a generator (not ``Tool.plain``) leaves the
common path at one attribute test, for :mod:`toolwire.run.progress`'s additions.
The common call (nothing to ask, an async plain tool without a timeout, retries or a
backend) does not come here to run: the turn's own coroutine for the call
(:meth:`~toolwire.run.execute.TurnRun._guarded`) tells it apart, begins it (counted in
:attr:`CallRunner.executed`, told to :attr:`CallRunner.on_start`) and awaits it, and
:meth:`CallRunner.success` makes its result.

It raises only cancellation (and what a tool raised that is not an ``Exception``);
:class:`~toolwire.run.execute.TurnRun` decides what a stopped call is answered.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, overload

from ..errors import ResultError
from ..messages import ContentPart, ToolResult, ToolStatus, parts_text
from ..tools import outcomes
from ..tools.context import ToolContext
from ..tools.tool import Tool
from ..turn import ToolRequest
from ._scope import deadline
from ._threads import Job
from .backend import ExecutionBackend
from .calls import ALLOWED, ASKING, HELD, RUNNING, WAITING, TurnCall
from .gate import Hold
from .progress import CallProgress, ToolScope, call_context, drive_async, drive_sync
from .results import content_parts, render_content

if TYPE_CHECKING:
    from .execute import Executor

__all__ = ["BeforeStart", "CallRunner", "ResultShaper", "StartCallback"]

_OK = ToolStatus.OK  # a module global: see toolwire.run.calls.WAITING (3.11's enum reads)


class ResultShaper(Protocol):
    """``(request, tool, content) -> content``: the context policy's result truncation.

    ``content`` is the result's text, or its content parts when the tool returned an
    image (text parts cut, images checked against what the model accepts: an
    :class:`~toolwire.errors.ImageError` makes the call's error result).
    """

    @overload
    def __call__(self, request: ToolRequest, tool: Tool, content: str, /) -> str: ...
    @overload
    def __call__(
        self, request: ToolRequest, tool: Tool, content: tuple[ContentPart, ...], /
    ) -> tuple[ContentPart, ...]: ...


StartCallback = Callable[[int], None]
BeforeStart = Callable[[ToolRequest, Tool], Awaitable[str | None]]
"""Awaited before a call that is not harmless to repeat runs (the run store's start
row, :func:`toolwire.run.resuming.call_journal`): ``None`` to run it, or why it may not run."""


def _first(call: TurnCall) -> int:
    """The position of a call whose turn tells none (a runner of its own)."""
    return 0


class CallRunner:
    """Runs a turn's valid calls, one :meth:`run` per call (see the module docstring).

    Args:
        executor: The executor (tools, options, permission gate, threads, backoff).
        shape_result: Cuts each successful result's text (the context policy).
        keep_full: Keep the whole text of a cut result on the call (someone observes).
        uncut: Tool -> the longest result text ``shape_result`` never cuts; a result
            that long or shorter is not handed to it (a tool not in it: every result is).
        on_start: Called with the provider index when a call's tool function begins.
        before_start: Awaited before a call that is not harmless to repeat runs.
        scope: What a ``ToolContext`` of the turn's calls is made from (:mod:`.progress`).
        position_of: The call's position among its turn's calls (the idempotency key's).
    """

    def __init__(
        self,
        executor: Executor,
        *,
        shape_result: ResultShaper | None,
        keep_full: bool,
        uncut: Mapping[Any, int] | None = None,
        on_start: StartCallback | None = None,
        before_start: BeforeStart | None = None,
        scope: ToolScope | None = None,
        position_of: Callable[[TurnCall], int] = _first,
    ) -> None:
        self._executor = executor
        self._shape_result = shape_result
        # Tested here, before the call: a shaper's call per result cost ~2,000
        # instructions to say "short enough" (bench/README.md, ninth pass).
        self._uncut: Mapping[Any, int] = {} if uncut is None else uncut
        self._keep_full = keep_full
        self._told: set[TurnCall] = set()  # calls on_start was called for
        self.on_start = on_start
        self.before_start = before_start  # the run store's start row
        self.executed = 0  # calls handed to their tool (retries not counted)
        # For tools that take a ToolContext or are generators (given by the turn).
        self.scope = scope
        self.position_of = position_of
        # No permission gate and no backend: tested once for the turn, not per call (by
        # the turn's test for the common call, TurnRun._guarded).
        self.bare = executor.gate is None and executor.options.backend is None

    async def run(self, call: TurnCall) -> ToolResult | None:
        """The call's result: ``denied``, or how its tool ran (``None``: the gate held
        it for a later decision, :data:`~toolwire.run.gate.HOLD`)."""
        if call.started_at is None:
            call.started_at = time.time()
        tool = call.tool
        executor = self._executor
        assert tool is not None
        if call.state is WAITING and executor.gate is None:
            call.advance(ALLOWED)  # nothing to ask (no await)
            denial = None
        else:
            denial = await self._permit(call)
        if isinstance(denial, Hold):
            return None
        if denial is None and self.before_start is not None and not call.harmless:
            unsafe = await self.before_start(call.request, tool)
            if unsafe is not None:
                return call.unfinished(unsafe)
        if denial is not None:
            return outcomes.denied_result(call.request.id, call.request.name, denial)
        return await self._attempts(call)

    async def _permit(self, call: TurnCall) -> str | Hold | None:
        """Ask the executor's permission gate (once per call) whether the call may run.

        Inside the call's own task, so an approval wait never holds up its siblings.
        A gate that raises denies: a broken permission check must not let calls through.
        """
        if not call.needs_permission:
            return None
        gate = self._executor.gate
        if gate is None:
            call.advance(ALLOWED)
            return None
        tool = call.tool
        assert tool is not None
        call.advance(ASKING)
        try:
            denial = await gate(_as_validated(call), tool)
        except Exception as exc:
            denial = f"the permission check failed ({describe(exc)})"
        if denial is None:
            call.advance(ALLOWED)
        elif isinstance(denial, Hold):
            call.advance(HELD)
        return denial

    async def _attempts(self, call: TurnCall) -> ToolResult:
        """Run the call, retrying retryable failures of idempotent tools."""
        tool = call.tool
        assert tool is not None
        executor = self._executor
        # Tested first: with no abandoned call (the common case) no coroutine is made.
        if (
            executor.overrunning
            and await executor.wait_for_overruns(unsafe=not call.safe) is not None
        ):
            return call.unfinished(overlap_reason(executor.options.overrun_grace))
        attempts = 1 + (tool.retries if tool.idempotent else 0)
        self.executed += 1
        for attempt in range(attempts):
            call.attempts += 1
            try:
                value = await self._once(call, tool)
            except Exception as exc:
                failure: Exception = exc
            else:
                return self.success(call, tool, value)
            if attempt + 1 == attempts or not executor.options.retry_on(failure):
                break
            failed_at = time.time()  # retries only: the trace page draws each attempt
            await executor.sleep(executor.backoff(attempt))
            call.retried = (*call.retried, (failed_at, time.time()))
        return outcomes.raised_result(call.request.id, tool, failure)

    async def _once(self, call: TurnCall, tool: Tool) -> Any:
        backend = self._executor.options.backend
        if backend is not None and backend.accepts(tool):
            return await self._on_backend(call, tool, backend)
        if not tool.plain:
            return await self._extended(call, tool)
        if not tool.is_async:
            job = functools.partial(tool.invoke, call.input)
            return await self._in_thread(call, tool, job)
        if call.state is ALLOWED:  # began() written out: once per call
            call.advance(RUNNING)
        if self.on_start is not None:  # nobody listens in the common case
            self.notify_start(call)
        if tool.timeout is None:
            return await tool.invoke(call.input)
        async with deadline(tool.timeout):
            return await tool.invoke(call.input)

    async def _on_backend(self, call: TurnCall, tool: Tool, backend: ExecutionBackend) -> Any:
        """Run the call on the backend; the deadline's cancellation reaches the remote call."""
        call.began()
        async with deadline(tool.timeout):
            if tool.plain:
                return await backend.invoke(tool, call.input)
            _, context = self._context(call)
            return await backend.invoke(tool, call.input, context=context)

    def _context(self, call: TurnCall) -> tuple[CallProgress, ToolContext]:
        """The call's progress reporter and its ``ToolContext`` (made for a generator
        tool too, which takes none: a backend reports progress through it)."""
        if self.scope is None:
            self.scope = ToolScope.standalone()
        report = CallProgress(self.scope, call)
        return report, call_context(self.scope, call, self.position_of(call), report)

    async def _extended(self, call: TurnCall, tool: Tool) -> Any:
        """A tool that takes a ``ToolContext`` or is a generator (:mod:`.progress`)."""
        report, context = self._context(call)
        value = call.input
        if tool.generator == "sync" or (tool.generator is None and not tool.is_async):
            stop = threading.Event()
            try:
                job = functools.partial(drive_sync, tool, value, context, report, stop)
                return await self._in_thread(call, tool, job)
            finally:
                stop.set()  # an abandoned generator stops at its next yield
        call.began()
        self.notify_start(call)
        async with deadline(tool.timeout):
            if tool.generator == "async":
                return await drive_async(tool, tool.invoke(value, context), report)
            return await tool.invoke(value, context)

    async def _in_thread(self, call: TurnCall, tool: Tool, job_fn: Callable[[], Any]) -> Any:
        """Run a sync tool's ``job_fn`` in a worker thread, under the loop's thread cap."""
        executor = self._executor
        async with executor.thread_limit():
            self.notify_start(call)
            job = executor.pool.submit(job_fn)
            try:
                if tool.timeout is None:
                    return await job.future
                async with deadline(tool.timeout):
                    return await job.future
            finally:
                if _release(call, job):
                    executor.overran(job, unsafe=not call.safe)

    def notify_start(self, call: TurnCall) -> None:
        """Tell ``on_start`` the call's tool begins (once per call, retries included)."""
        if self.on_start is not None and call not in self._told:
            self._told.add(call)
            self.on_start(call.index)

    def success(self, call: TurnCall, tool: Tool, value: Any) -> ToolResult:
        """The result of a call whose tool returned ``value``: its text, cut by the
        context policy (an error result when the value has no text)."""
        try:
            if value.__class__ is str:  # the hot path: render_content's first case
                content = value if value.isascii() else render_content(value)
            else:
                parts = content_parts(value)
                if parts is not None:  # the tool returned an image
                    return self._parts_success(call, tool, parts)
                content = render_content(value)
        except ResultError as exc:  # ImageError too: an image the model cannot take
            return outcomes.failure_result(call.request.id, tool.name, exc.message)
        if self._shape_result is not None and len(content) > self._uncut.get(tool, -1):
            full = content
            content = self._shape_result(call.request, tool, content)
            if content is not full and self._keep_full:
                call.full_result = full  # the model sees the cut text; the log keeps it all
        return ToolResult(call.request.id, tool.name, content, _OK)

    def _parts_success(
        self, call: TurnCall, tool: Tool, parts: tuple[ContentPart, ...]
    ) -> ToolResult:
        """A result with images: text parts cut and images checked by the context policy."""
        if self._shape_result is not None:
            shaped = self._shape_result(call.request, tool, parts)
            if shaped is not parts and self._keep_full:
                call.full_result = parts_text(parts)  # the log keeps all the text
            parts = shaped
        return ToolResult.from_parts(call.request.id, tool.name, parts)


def _release(call: TurnCall, job: Job) -> bool:
    """After waiting on a thread job: note whether it ran, abandon it if unfinished.

    Returns whether it was abandoned (its thread may still be running it).
    """
    if not job.future.done() or job.future.cancelled():
        taken = job.abandon()  # atomic with the thread's claim: no job starts after this
        if taken:
            call.began()
        return taken
    if job.started:
        call.began()
    return False


def _as_validated(call: TurnCall) -> ToolRequest:
    """The request the gate judges: the validated input the tool will run with, and
    ``repaired`` set when repair recovered it (the approver never sees ``None`` where a
    repaired call would then run)."""
    request, validation = call.request, call.validation
    if validation.input is request.input and not validation.repaired:
        return request
    repaired = request.repaired or validation.repaired
    return dataclasses.replace(request, input=validation.input, repaired=repaired)


def overlap_reason(grace: float) -> str:
    """Why a call was not run: an abandoned call it may not overlap is still running."""
    return (
        "an earlier call that ran past its timeout is still running in its thread after a "
        f"{grace:g} s grace period, and this call may not run alongside it; try again later"
    )


def describe(exc: BaseException | None) -> str:
    """An exception in a few words: its class and message."""
    if exc is None:
        return "unknown reason"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
