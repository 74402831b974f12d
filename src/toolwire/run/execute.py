"""The executor: runs one turn's tool calls, in batches, with one result per call.

A :class:`TurnRun` executes the calls of one model turn. It can start while the turn
is still streaming (*early execution*): the agent loop hands it each
``ToolCallReady`` event, and a call that is valid, concurrency-safe and *harmless to
discard* (its tool has no side effects, or is idempotent) starts at once when every
earlier call of the turn is known, and is valid-and-safe or invalid (an invalid call
never runs, so it orders nothing). The stream may still change a call that looked
finished (arguments sent twice, a name fragment after the arguments), so a call whose
running would matter if the final turn replaced it waits for the end of the stream;
``side_effects`` defaults to ``True``, so read-only tools declare ``side_effects=False``
to start early. A call that ran and was then replaced is recorded in ``discarded``
with ``ran=True``, and its replacement's result says so. The first unsafe call ends
early starts: it and every call after it wait for the end of the stream and for the
calls before them (:mod:`toolwire.run.early` decides which calls start early). At the end of the stream :meth:`TurnRun.finish` reconciles the final turn with
what started — a started call whose final request differs (a provider that corrected
the arguments at the end) is cancelled, recorded in ``discarded``, and planned again —
then plans the rest with :func:`~toolwire.run.plan.plan_batches` and runs batch after
batch. If the stream fails instead, leaving the ``async with`` cancels whatever started
and records it in ``discarded``.

When a call's code first runs: a call started early, or in a batch of several, runs
in a task of its own (its ``current_task()``, so an ``asyncio.timeout`` or anyio scope
inside the tool is the call's, and a copy of the context); a lone call after the stream
is awaited in the turn's own. On Python 3.12+, with a stdlib event loop without a task
factory or debug mode, that task starts *eagerly* (``eager_start=True``): the tool runs
at once, inside :meth:`TurnRun.ready` for an early start or as its batch starts, up to
its first suspension, and a tool that never suspends is answered there, before the
stream's next event is read (a stream consumer still sees the call's
``ToolCallReady``, then its ``ToolCallRunning``, then its result). On 3.10 and 3.11 the
task is scheduled: the tool first runs when the caller next suspends.

Exactly one result per call, whatever happens. Every call runs inside a wrapper that
turns its outcome into a :class:`~toolwire.messages.ToolResult` (each built by
:mod:`toolwire.tools.outcomes`; one call is run by :class:`~toolwire.run.runner.CallRunner`,
and is always in one :class:`~toolwire.run.calls.CallState`):

=========================================  ==========================================
outcome                                    status
=========================================  ==========================================
returned a value                           ``ok`` (see :mod:`toolwire.run.results`), or
                                           ``error`` when the value has no text
raised ``Exception`` (after any retries)   ``error``
ran past its ``timeout``                   ``timeout`` (a sync tool's thread is
                                           abandoned: Python cannot kill it)
cancelled while running (run cancelled,    ``cancelled``
KeyboardInterrupt in a sibling, a turn
that turned out invalid)
denied by the permission gate (never      ``denied``
runs; see :mod:`toolwire.run.gate`)
never started (the run stopped first, a    ``not_executed``
usage limit, ``tool_choice="none"``)
=========================================  ==========================================

The results are kept in slots owned by the ``TurnRun``, not returned through the
call stack, so the agent loop can read :meth:`TurnRun.results` in a ``finally``
block even when the run is being cancelled: the history never holds an orphaned call.
A ``KeyboardInterrupt`` or ``SystemExit`` raised by a tool is deferred: the wrapper
records the call as cancelled, cancels its siblings, and :meth:`TurnRun.finish`
re-raises it once every call has a result (raising it inside a task would tear the
event loop down first).

Retries: an idempotent tool's call that raised (or timed out) is run again up to
``tool.retries`` times when ``ExecutionOptions.retry_on`` says the failure is
retryable, after an exponential backoff with jitter (half fixed, half random, capped).
Non-idempotent tools are never re-run automatically: the model sees the error.

Batch time budget (``ExecutionOptions.batch_budget``): a parallel batch still running
when the budget runs out *degrades to serial*. The calls that finished keep their
results; the stragglers are cancelled, and then run again one at a time, in call
order, each under its own timeout only — if running them again is harmless (the call
never started, e.g. it was queued behind the thread cap, or the tool is idempotent or
has no side effects). A straggler that may not run twice gets a ``timeout`` result
naming the budget. Overrunning a parallel batch usually means contention (the thread
cap, a rate-limited backend, a shared lock); run alone, each call gets the resource
to itself, and the results that did arrive are never thrown away.
"""

from __future__ import annotations

import asyncio
import random
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from ..checks import check_int, check_number
from ..errors import CallerError, ResultError
from ..messages import ToolResult
from ..tools import outcomes
from ..tools.tool import Tool, Toolset
from ..tools.validate import Validation
from ..turn import ToolRequest
from ..wire.events import ToolCallReady, ToolCallStarted
from ._scope import TaskScope, all_done
from ._threads import Job, WorkerPool, shared_pool
from .backend import ExecutionBackend
from .calls import DISCARDED, DONE, HELD, RUNNING, WAITING, CallRecord, Discarded, TurnCall
from .early import EarlyStarts
from .gate import CallGate
from .plan import plan_batches
from .progress import ToolScope
from .runner import BeforeStart, CallRunner, ResultShaper, StartCallback, describe

__all__ = [
    "ExecutionOptions",
    "Executor",
    "TurnRun",
    "default_retryable",
]

ResultCallback = Callable[[int, ToolResult], None]
CallCallback = Callable[[CallRecord, ToolResult], None]
Sleep = Callable[[float], Awaitable[None]]

OFF_LOOP_ARGUMENTS = 64 * 1024
"""Arguments longer than this (characters) are validated in a worker thread.

Repair of large malformed arguments is bounded but can still take a tenth of a second;
on the event loop that would hold up the stream and other calls' timeouts. Smaller
arguments validate in microseconds, less than a thread hand-off costs."""


def default_retryable(error: Exception) -> bool:
    """Every failure is worth another try, except a value that cannot become text.

    (Running the call again would return the same unserialisable value.)
    """
    return not isinstance(error, ResultError)


@dataclass(frozen=True)
class ExecutionOptions:
    """How the executor runs calls.

    Attributes:
        max_threads: Sync tool calls running at once in worker threads (per event
            loop); further sync calls wait for a slot.
        batch_budget: Seconds a parallel batch may take before it degrades to serial
            (``None``: no budget). See the module docstring.
        backoff_base: Seconds before the first retry; doubled for each further one.
        backoff_max: The longest wait between retries.
        retry_on: Which failures of an idempotent tool are retried.
        backend: Where calls run (:mod:`toolwire.run.backend`); ``None`` runs them in
            this process. The ordering and one-result rules hold for every backend.
        overrun_grace: Seconds a call waits for an abandoned sync call (one that ran
            past its timeout and keeps running in its thread) before it would overlap
            it: an unsafe call waits for any such call, any call for an unsafe one.
            Still running then, the call is answered ``not_executed`` with the reason.
    """

    max_threads: int = 32
    batch_budget: float | None = None
    backoff_base: float = 0.2
    backoff_max: float = 5.0
    retry_on: Callable[[Exception], bool] = default_retryable
    backend: ExecutionBackend | None = None
    overrun_grace: float = 5.0

    def __post_init__(self) -> None:
        if self.backend is not None and not isinstance(self.backend, ExecutionBackend):
            raise CallerError(
                f"ExecutionOptions.backend must be an execution backend, not {type(self.backend).__name__}",
                hint="pass toolwire.RayBackend(...) or None",
            )
        check_int("ExecutionOptions.max_threads", self.max_threads, minimum=1)
        if self.batch_budget is not None:
            check_number("ExecutionOptions.batch_budget", self.batch_budget)
        for name in ("backoff_base", "backoff_max", "overrun_grace"):
            check_number(f"ExecutionOptions.{name}", getattr(self, name), positive=False)
        if not callable(self.retry_on):
            raise CallerError("ExecutionOptions.retry_on must be a function of the exception")


class Executor:
    """Runs tool calls against a :class:`~toolwire.tools.Toolset`.

    Args:
        tools: The tools (a toolset, or tools and functions to put in one).
        options: Execution settings.
        sleep: Awaited between retries (a fake clock in tests).
        rng: Source of the backoff jitter.
        pool: Worker threads for sync tools (default: one shared by the process).
        gate: Asked before each valid call runs (permissions, :mod:`.gate`); a call it
            denies is never executed and gets a ``denied`` result.
    """

    def __init__(
        self,
        tools: Toolset | Sequence[Tool | Callable[..., Any]],
        options: ExecutionOptions | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        pool: WorkerPool | None = None,
        gate: CallGate | None = None,
    ) -> None:
        self.gate = gate
        self.toolset = tools if isinstance(tools, Toolset) else Toolset(tools)
        self.options = options or ExecutionOptions()
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.pool = pool or shared_pool()
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._limits = weakref.WeakKeyDictionary()
        # Sync calls abandoned while still running in their thread: (job, unsafe).
        self.overrunning: list[tuple[Job, bool]] = []

    def turn(  # noqa: PLR0913 — the turn's callbacks, each optional (TurnRun's)
        self,
        *,
        early: bool = True,
        allowed: int | None = None,
        on_result: ResultCallback | None = None,
        on_call: CallCallback | None = None,
        shape_result: ResultShaper | None = None,
        on_start: StartCallback | None = None,
        before_start: BeforeStart | None = None,
        scope: ToolScope | None = None,
        uncut: Mapping[Any, int] | None = None,
    ) -> TurnRun:
        """A run for one turn's calls; use it as ``async with``.

        Args:
            early: Start safe calls while the turn streams (see :class:`TurnRun`).
            allowed: The most calls this turn may execute (a usage limit); a turn
                with more valid calls executes none of them.
            on_result: Called with ``(provider index, result)`` as each call ends.
            on_call: Called with ``(record, result)`` as each call ends (after
                ``on_result``): the record says how it ran.
            shape_result: Cuts each successful result's text (the context policy; without
                it a result is the tool's whole text).
            on_start: Called with the provider index when a call's tool function
                begins (after its batch, approval and a worker thread were available).
            before_start: Awaited before a call that is not harmless to repeat runs
                (the run store's start row); a reason it returns stops the call.
            scope: The run id, round, ``deps`` and progress emitter that tools taking a
                ``ToolContext`` or reporting progress get (:mod:`.progress`; ``None``:
                the turn is a run of its own, and progress goes nowhere).
            uncut: Tool -> the longest result text ``shape_result`` never cuts: a
                result that long or shorter is not handed to it (the context policy's
                :attr:`~toolwire.context.RunContext.uncut_lengths`; a tool not in it:
                every result is).
        """
        return TurnRun(
            self,
            early=early,
            allowed=allowed,
            on_result=on_result,
            on_call=on_call,
            shape_result=shape_result,
            on_start=on_start,
            before_start=before_start,
            scope=scope,
            uncut=uncut,
        )

    async def execute(self, requests: Sequence[ToolRequest]) -> list[ToolResult]:
        """Validate, plan and run a finished turn's calls.

        Returns:
            One result per request, in request order.
        """
        run = self.turn(early=False)
        async with run:
            await run.finish(requests)
        return run.results()

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt + 1``: half fixed, half jitter."""
        ceiling = float(min(self.options.backoff_max, self.options.backoff_base * 2.0**attempt))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def overran(self, job: Job, *, unsafe: bool) -> None:
        """A sync call was abandoned while its thread may still run it: remember it."""
        if not job.ended.done():
            self.overrunning.append((job, unsafe))

    async def wait_for_overruns(self, *, unsafe: bool) -> Job | None:
        """Wait (up to ``overrun_grace``) until no abandoned call this one would overlap
        is still running: any, for an unsafe call; unsafe ones, for a safe call.

        Returns:
            ``None``, or a job still running when the grace period ran out. (Callers
            skip the call while :attr:`overrunning` is empty: nothing to wait for.)
        """
        loop = asyncio.get_running_loop()
        self.overrunning = [(j, u) for j, u in self.overrunning if not j.ended.done()]
        blocking = [j for j, u in self.overrunning if (unsafe or u) and j.loop is loop]
        if not blocking:
            return None
        _, pending = await asyncio.wait(
            [j.ended for j in blocking], timeout=self.options.overrun_grace
        )
        return next((j for j in blocking if j.ended in pending), None)

    def thread_limit(self) -> asyncio.Semaphore:
        """The sync-call slots of the running event loop."""
        loop = asyncio.get_running_loop()
        limit = self._limits.get(loop)
        if limit is None:
            limit = self._limits[loop] = asyncio.Semaphore(self.options.max_threads)
        return limit


class _Positions:
    """Each call's 0-based position among its turn's calls (the idempotency key's).

    ``known``: the early-started calls of non-plain tools (where each stood when it
    started: the final turn must agree), or a resumed turn's given positions; the
    others are their places in ``order``, the final calls, once bound.
    """

    __slots__ = ("known", "order")

    def __init__(self) -> None:
        self.known: dict[TurnCall, int] = {}
        self.order: list[TurnCall] | None = None

    def __call__(self, call: TurnCall) -> int:
        known = self.known.get(call)
        if known is None and self.order is not None:  # once per turn: linear in its calls
            for place, each in enumerate(self.order):
                self.known.setdefault(each, place)
            known = self.known.get(call)
        return known or 0


class TurnRun:
    """Executes one turn's calls; see the module docstring. Use as ``async with``.

    While the turn streams, feed :meth:`started` and :meth:`ready`; at its end, call
    :meth:`bind` with the turn's requests and await :meth:`finish` (or pass the
    requests to ``finish``); after the ``async with`` block (or in a ``finally``),
    :meth:`results` gives exactly one result per request.

    It holds the turn's calls (each in one :class:`~toolwire.run.calls.CallState`) and
    their one result each; :class:`~toolwire.run.early.EarlyStarts` decides which
    calls start while the turn streams, and :class:`~toolwire.run.runner.CallRunner`
    runs each call to its result. Those, and the task scope of its calls, are made at
    the turn's first call: a turn without calls (every agent run's answer) makes none
    of them and waits on nothing.

    Attributes:
        discarded: Early-started calls cancelled because the turn changed or failed.
        skipped_for_limit: How many valid calls were not executed because they would
            pass the ``allowed`` limit (0 when the limit was not hit).
    """

    # Made at the turn's first call (_open): read only once a call exists.
    _runner: CallRunner
    _scope: TaskScope
    _early: EarlyStarts
    _positions: _Positions

    def __init__(  # noqa: PLR0913 — the turn's callbacks, each optional
        self,
        executor: Executor,
        *,
        early: bool,
        allowed: int | None,
        on_result: ResultCallback | None,
        on_call: CallCallback | None = None,
        shape_result: ResultShaper | None = None,
        on_start: StartCallback | None = None,
        before_start: BeforeStart | None = None,
        scope: ToolScope | None = None,
        uncut: Mapping[Any, int] | None = None,
    ) -> None:
        self._executor = executor
        # What the turn's CallRunner is made from, at its first call (_open).
        self._shape_result = shape_result
        self._uncut = uncut
        self._on_start = on_start
        self._before_start = before_start  # the run store's start row
        self._tool_scope = scope
        self._allowed = allowed
        self._on_result = on_result
        self._on_call = on_call
        self._early_enabled = early
        self._opened = False  # the turn's first call made its runner, scope and starts
        self._ended: asyncio.Future[None] | None = None  # see _end_marker
        self._by_index: dict[int, TurnCall] = {}  # the calls that closed while streaming
        self._off_loop: dict[int, Validation] = {}  # by id(request): see _validate_off_loop
        self._launched = 0
        self._dropped = 0  # early starts discarded: launched, not part of the final turn
        # An opened turn holds 29 attributes, the most CPython 3.11 keeps inline for a
        # class's instances (their reads specialised); a 30th costs every call's reads of
        # the turn (bench/README.md, thirteenth pass, second round): new state goes on an
        # object the turn has, or takes an attribute's place.
        self._order: list[TurnCall] | None = None  # the final calls, once bind() ran
        self._stop_reason = "the run stopped before this call ran"
        self._interrupt: BaseException | None = None
        self._cut: set[TurnCall] = set()  # cancelled by the batch budget, to run again
        self._ran_before: dict[int, Discarded] = {}  # by index: an early start that ran, replaced
        self.discarded: list[Discarded] = []
        self.skipped_for_limit = 0
        self.deferred: list[TurnCall] = []  # later batches of a turn with a held call
        self._holding = False  # a call of the turn was held (a flag: the hot path's check)

    def _open(self) -> None:
        """Make what running calls takes, at the turn's first call.

        A turn without calls (every run's answer) makes no runner, task scope, early
        starts or positions, and has nothing to drain. A scope needs no entering (its
        ``__aenter__`` does nothing): made inside the turn's ``async with``, it is
        exited by the turn's ``__aexit__``.
        """
        self._opened = True
        self._scope = TaskScope(eager=True)  # a call's first step runs as it starts: _launch
        self._early = EarlyStarts(self._early_enabled)
        # Where each call stands in the turn (progress.py's idempotency keys), asked by
        # the runner: kept apart from the turn, so that the runner holds no reference
        # back to it (the cycle would leave every turn's calls, tasks and results to the
        # garbage collector instead of freeing them when the turn is dropped).
        self._positions = _Positions()
        self._runner = CallRunner(
            self._executor,
            shape_result=self._shape_result,
            keep_full=self._on_call is not None,
            uncut=self._uncut,
            on_start=self._on_start,
            before_start=self._before_start,
            scope=self._tool_scope,
            position_of=self._positions,
        )

    @property
    def on_start(self) -> StartCallback | None:
        """Called with the provider index when a call's tool function begins."""
        return self._on_start

    @on_start.setter
    def on_start(self, callback: StartCallback | None) -> None:
        self._on_start = callback
        if self._opened:
            self._runner.on_start = callback

    @property
    def scope(self) -> ToolScope | None:
        """What a ``ToolContext`` of this turn's calls is made from (:mod:`.progress`)."""
        return self._tool_scope

    @scope.setter
    def scope(self, scope: ToolScope | None) -> None:
        self._tool_scope = scope
        if self._opened:
            self._runner.scope = scope

    def position(self, call: TurnCall) -> int:
        """The call's 0-based position among the turn's calls (the idempotency key's)."""
        return self._positions(call)

    # -- context -------------------------------------------------------------------

    async def __aenter__(self) -> TurnRun:
        return self  # the task scope is made with the first call (_open)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._stop_reason = _stop_reason(exc)
            if self._order is None:
                self._discard_all(f"the turn failed before it finished: {describe(exc)}")
        if self._opened:  # no call, no task: nothing to cancel or wait for
            await self._scope.__aexit__(exc_type, exc, tb)

    # -- streaming phase -------------------------------------------------------------

    def started(self, event: ToolCallStarted) -> None:
        """A call appeared in the stream (its index orders early starts)."""
        if not self._opened:  # the turn's first call
            self._open()
        self._early.know(event.index, self._by_index)

    def ready(self, event: ToolCallReady, validation: Validation | None = None) -> None:
        """A call's arguments closed: validate it, and start it early if it may.

        ``validation``: the request's validation, when the caller already made it
        (:meth:`ready_off_loop`).
        """
        if not self._opened:  # the turn's first call
            self._open()
        index, by_index = event.index, self._by_index
        may_launch = None if self._allowed is None else self._may_launch  # no limit: no ask
        if index in by_index:  # closed again: nothing new to prepare or to place
            self._early.advance(by_index, may_launch, self._launch)
            return
        # _prepare, written out (once per call): a streamed call's big arguments were
        # validated by ready_off_loop, so there is no off-loop validation to look up.
        request, toolset = event.request, self._executor.toolset
        if validation is None:  # the common call is admitted with its input alone
            tool, value, validation = toolset.admit(request)  # one lookup of the tool
        else:
            tool, value = toolset.get(request.name), None
        call = by_index[index] = TurnCall(request, validation, tool, value)
        if not call.runnable:
            self._settle(call, outcomes.error_result(request.id, call.validation))
        start = self._early.ready(call, may_launch)
        if start:
            self._launch(call)
        elif start is None:  # not the stream's common order: the general path decides
            self._early.advance(by_index, may_launch, self._launch)

    async def ready_off_loop(self, event: ToolCallReady) -> None:
        """:meth:`ready`, validating arguments over ``OFF_LOOP_ARGUMENTS`` in a thread.

        The same validation (and so the same result) as :meth:`ready`; meanwhile the
        event loop keeps serving other calls, their timeouts and the stream's reader.
        """
        validation = None
        request = event.request
        if event.index not in self._by_index and len(request.raw_arguments) > OFF_LOOP_ARGUMENTS:
            validation = await asyncio.to_thread(self._executor.toolset.validate, request)
        self.ready(event, validation)

    def retract(self, index: int, reason: str) -> None:
        """A text format took call ``index`` back (cut off or malformed markup).

        A call started early on the strength of its ``ToolCallReady`` is cancelled and
        recorded in ``discarded``; the call is forgotten, so the final turn (which does
        not hold it) owes it no result.
        """
        call = self._by_index.pop(index, None)
        if call is not None:
            self._discard(call, f"the model's output retracted the call: {reason}")

    def _may_launch(self) -> bool:
        return self._allowed is None or self._launched < self._allowed

    # -- end of the turn ---------------------------------------------------------------

    @property
    def bound(self) -> bool:
        """Whether the final turn's calls are known (:meth:`bind` ran)."""
        return self._order is not None

    @property
    def executed(self) -> int:
        """How many calls were handed to their tool (retries not counted)."""
        return self._runner.executed if self._opened else 0

    def bind(
        self, requests: Sequence[ToolRequest], *, positions: Sequence[int] | None = None
    ) -> None:
        """Fix the turn's final calls, reusing what was validated or started early.

        Args:
            requests: The final turn's requests, in call order.
            positions: Each request's position in its model turn, when ``requests`` are
                some of that turn's calls (a resumed turn: the idempotency keys must be
                the ones the calls had); default: their places in ``requests``.

        Raises:
            CallerError: The turn was already bound.
        """
        if self._order is not None:
            raise CallerError("TurnRun.bind() was called twice for one turn")
        if not self._opened:  # no call streamed
            if not requests:  # nor in the final turn (every run's answer): nothing to run
                self._order = []
                return
            self._open()
        self._order = self._positions.order = self._reconcile(requests)
        if positions is not None:
            self._positions.known = dict(zip(self._order, positions, strict=True))

    def validations(self) -> list[Validation]:
        """The validation of each answered call of the bound turn, in call order."""
        return [c.validation for c in self._order or () if c.result is not None]

    def verdicts(self) -> list[Validation | None]:
        """:meth:`validations` without making the ones not yet made: ``None`` for a call
        admitted without one (:meth:`Toolset.admit <toolwire.tools.tool.Toolset.admit>`:
        valid, not repaired)."""
        return [c.verdict for c in self._order or () if c.result is not None]

    def answered_requests(self) -> list[ToolRequest]:
        """The request of each answered call of the bound turn, in call order."""
        return [c.request for c in self._order or () if c.result is not None]

    async def finish(
        self,
        requests: Sequence[ToolRequest] | None = None,
        *,
        skip_reason: str | None = None,
        keep: frozenset[str] = frozenset(),
    ) -> None:
        """Run the turn's calls (those not started yet), batch after batch.

        Args:
            requests: The final turn's requests, in call order (omit if :meth:`bind`
                already ran).
            skip_reason: Execute nothing and answer every call ``not_executed`` (or
                ``cancelled`` if it started early) with this reason — e.g. the model
                called tools when told not to.
            keep: Tools whose calls ``skip_reason`` does not skip (the structured
                output's ``final_result``, which a forced final request asks for).

        Raises:
            KeyboardInterrupt: A tool raised it (every call has its result first).
            SystemExit: Likewise.
            CallerError: Neither ``requests`` nor an earlier :meth:`bind` gave the calls.
        """
        if requests is not None:
            await self._validate_off_loop(requests)
            self.bind(requests)
        if self._order is None:
            raise CallerError("TurnRun.finish() needs the turn's requests")
        if not self._opened:  # a turn without calls
            return
        # Every final call started while the turn streamed: counted, not looked at (a call
        # is launched once; the early starts the final turn did not keep are _dropped).
        # Such a turn is within its call limit (an early start asks _may_launch first).
        if (
            skip_reason is None
            and self._executor.options.batch_budget is None
            and self._launched - self._dropped == len(self._order)
        ):
            await self._all_started()
            return
        runnable = [c for c in self._order if c.runnable]
        if skip_reason is None and self._allowed is not None and len(runnable) > self._allowed:
            self.skipped_for_limit = len(runnable)
            skip_reason = (
                f"the run's tool call limit allows {self._allowed} more call(s) and this turn "
                f"made {len(runnable)}"
            )
        if skip_reason is not None:
            self._skip([c for c in runnable if c.request.name not in keep], skip_reason)
            runnable = [c for c in runnable if c.request.name in keep]
        deferring = False  # an earlier batch held a call: this one waits, in call order
        for batch in plan_batches([c.safe for c in runnable]):
            if self._interrupt is not None:
                break
            calls = [runnable[i] for i in batch.calls]
            if deferring:
                self.deferred.extend(c for c in calls if c.task is None)
                calls = [c for c in calls if c.task is not None]  # harmless early starts
            if calls:
                await self._run_batch(calls)
            deferring = self._holding  # set by a held call (an early one included)
        if self._interrupt is not None:
            self._stop_reason = "the run was interrupted before this call ran"
            raise self._interrupt

    async def _all_started(self) -> None:
        """Wait for a turn whose calls all started while it streamed.

        Planning its batches would run none: each batch's calls already run, and a call
        held by the gate defers only calls not started yet. Without a batch budget a
        batch is a wait for its tasks, so the turn is one wait for all of them: the
        scope's (:meth:`~toolwire.run._scope.TaskScope.join`; it holds every running
        call's task, and early starts the final turn discarded, cancelled, which end at
        once), after which the turn's exit has no task left to look at. An interrupt (a
        tool raised ``KeyboardInterrupt``) cancelled the rest, which end at once.
        """
        if self._interrupt is None:
            await self._scope.join()
        if self._interrupt is not None:
            self._stop_reason = "the run was interrupted before this call ran"
            raise self._interrupt

    @property
    def held(self) -> list[TurnCall]:
        """The calls the gate held for a later decision (:data:`~toolwire.run.gate.HOLD`)."""
        if not self._holding:  # set whenever a call is held: the common turn has none
            return []
        return [c for c in self._order or () if c.state is HELD]

    def results(self, *, keep_held: bool = False) -> list[ToolResult]:
        """Exactly one result per call of the finished turn, in call order.

        Calls without a result get one now: ``cancelled`` if the tool had started,
        ``not_executed`` if not. Results arriving later are ignored.

        Args:
            keep_held: Leave held and deferred calls without a result (the run pauses
                for them); otherwise they are answered ``not_executed`` too.

        Raises:
            CallerError: :meth:`bind` was never called (the turn did not finish).
        """
        if self._order is None:
            raise CallerError("TurnRun.results() needs bind() first: the turn has no calls yet")
        # Comprehensions, not maps of attrgetters: the interpreter specialises a slot read
        # in a loop, where attrgetter looks each name up again (~145 against ~330
        # instructions an item on 3.11; bench/README.md, tenth pass).
        answered = [c.result for c in self._order if c.result is not None]
        if len(answered) == len(self._order):  # every call has its result: nothing to settle
            return answered
        waiting = set(self.held).union(self.deferred) if keep_held else ()
        for call in self._order:
            if call.result is None and call not in waiting:
                self._settle(call, call.unfinished(self._stop_reason))
        return [c.result for c in self._order if c.result is not None]

    def _reconcile(self, requests: Sequence[ToolRequest]) -> list[TurnCall]:
        """The final calls, reusing what was validated or started while streaming."""
        by_index = self._by_index
        if not self._positions.known:
            # The common turn: its calls closed in order while streaming, each with the
            # request the final turn holds. One list comparison in C (identity first,
            # so the very requests compare without a call) where a lookup per call
            # matched them; an equal copy matches as the general path below would.
            announced = list(by_index.values())
            if [c.request for c in announced] == requests:
                return announced
        final_indices = {r.index for r in requests}
        if len(final_indices) != len(requests):  # indices must tell calls apart to match
            self._discard_all("the final turn's calls do not have distinct indices")
            return [self._prepare(r) for r in requests]
        for index, call in list(self._by_index.items()):
            if index not in final_indices:
                self._discard(call, "the call is not part of the final turn")
        order: list[TurnCall] = []
        for position, request in enumerate(requests):
            early = by_index.get(request.index)
            # The request the decoder announced is the one its turn holds (the common
            # case, tested inline); else the same id, name and arguments text.
            if early is not None and (early.request is request or early.same_request(request)):
                if self._positions.known.get(early, position) == position:
                    order.append(early)
                    continue
                self._discard(early, "an earlier call of the turn appeared or was retracted")
            elif early is not None:
                self._discard(early, "the final arguments differ from those it started with")
            order.append(self._prepare(request))
        return order

    def _skip(self, runnable: list[TurnCall], reason: str) -> None:
        for call in runnable:
            if call.task is not None:
                call.task.cancel()
            self._settle(call, call.unfinished(reason))

    # -- batches -------------------------------------------------------------------------

    async def _run_batch(self, batch: list[TurnCall]) -> None:
        if len(batch) == 1 and batch[0].task is None:
            await self._guarded(batch[0])  # a lone call needs no task
            return
        for call in batch:
            if call.task is None:
                if self._interrupt is not None:  # an earlier call raised it as it started
                    break
                self._launch(call)
        tasks = [c.task for c in batch if c.task is not None]
        budget = self._executor.options.batch_budget
        if budget is None:
            await all_done(tasks)
            return
        _, pending = await asyncio.wait(tasks, timeout=budget)
        if pending:
            await self._degrade_to_serial([c for c in batch if c.task in pending])

    async def _degrade_to_serial(self, stragglers: list[TurnCall]) -> None:
        """The batch budget ran out: cancel the stragglers, run them again one by one."""
        self._cut.update(stragglers)
        await self._scope.cancel([c.task for c in stragglers if c.task is not None])
        budget = self._executor.options.batch_budget
        for call in stragglers:
            if self._interrupt is not None:
                return
            tool = call.tool
            assert tool is not None
            self._cut.discard(call)
            if call.started and tool.side_effects and not tool.idempotent:
                self._settle(call, outcomes.budget_result(call.request.id, tool.name, budget))
            else:
                await self._guarded(call)

    # -- one call --------------------------------------------------------------------------

    async def _validate_off_loop(self, requests: Sequence[ToolRequest]) -> None:
        """Validate the big arguments that ``bind`` would validate, in a worker thread."""
        for request in requests:
            early = self._by_index.get(request.index)
            if len(request.raw_arguments) > OFF_LOOP_ARGUMENTS and (
                early is None or not early.same_request(request)
            ):
                validate = self._executor.toolset.validate
                self._off_loop[id(request)] = await asyncio.to_thread(validate, request)

    def _prepare(self, request: ToolRequest) -> TurnCall:
        """A final call the stream did not close: validated (off the loop, if its
        arguments are big: :meth:`_validate_off_loop`), answered now if it cannot run.
        (:meth:`ready` does the same for a streamed call, written out.)"""
        toolset = self._executor.toolset
        validation = self._off_loop.pop(id(request), None) if self._off_loop else None
        if validation is None:  # the common call is admitted with its input alone
            tool, value, validation = toolset.admit(request)  # one lookup of the tool
        else:
            tool, value = toolset.get(request.name), None
        call = TurnCall(request, validation, tool, value)  # asks its tool's concurrency policy
        if not call.runnable:
            self._settle(call, outcomes.error_result(request.id, call.validation))
        return call

    def _launch(self, call: TurnCall) -> None:
        """Start a call in a task of the turn's scope.

        Where Python can (3.12+, a stdlib loop: :func:`~toolwire.run._scope.task_maker`)
        the task starts eagerly: the call runs here, up to its first suspension, and a
        tool that never suspends has its result before this returns — before
        ``call.task`` is set, with ``_settle``'s callbacks run from inside the caller
        (:meth:`ready` in the stream loop, after the stream's consumer got the call's
        ``ToolCallReady``; or :meth:`_run_batch`). Nothing here reads the task after
        the start, and a call with a result is never started again. Once a tool raised
        ``KeyboardInterrupt`` nothing calls this: see :meth:`_guarded`.
        """
        self._launched += 1
        if self._order is None:  # launched while the turn still streams
            call.early = True
            if not call.tool.plain:  # type: ignore[union-attr]  # a launched call has its tool
                self._positions.known[call] = self._early.position
        # Named by its call's id: asyncio would format a "Task-N" name for it otherwise.
        task = self._scope.start(self._guarded(call), call.request.id)
        if call.result is None:  # running (or held by the gate)
            call.task = task
        else:  # started eagerly, it ended as it started: neither the scope nor the call
            # keeps its task (nor, so, its context) alive until the turn ends
            call.task = self._ended or self._end_marker()

    def _end_marker(self) -> asyncio.Future[None]:
        """The turn's done future: ``task`` of every call that ended as it started (a
        launched call always has one; this one is done, as the task was)."""
        ended = self._ended = asyncio.get_running_loop().create_future()
        ended.set_result(None)
        return ended

    async def _guarded(self, call: TurnCall) -> None:
        """Run one call to exactly one result; never raises but cancellation."""
        runner, tool = self._runner, call.tool
        assert tool is not None  # only a runnable call runs
        try:
            # The common call: a plain async tool without a timeout or retries (the
            # tool's call facts), nothing to ask, no start row, nothing abandoned to wait
            # for. Begun and awaited here, in one frame; any other goes to the runner.
            if (
                tool._direct
                and call.state is WAITING
                and runner.bare
                and (runner.before_start is None or call.harmless)
                and not self._executor.overrunning
            ):
                runner.executed += 1
                call.attempts += 1
                # WAITING -> ALLOWED -> RUNNING are both moves of TRANSITIONS, and the
                # state was tested above: set, not advanced twice.
                call.state = RUNNING
                call.started_at = time.time()
                if runner.on_start is not None:  # nobody listens in the common case
                    runner.notify_start(call)
                args = call.input
                try:
                    # Tool.invoke of a plain tool, written out: its frame, once per call
                    value = await (tool.fn(args) if tool._signature is None else tool.fn(**args))
                except Exception as exc:
                    result = outcomes.raised_result(call.request.id, tool, exc)
                else:
                    result = runner.success(call, tool, value)
            else:
                outcome = await runner.run(call)
                if outcome is None:  # held by the gate: no result in this run
                    self._holding = True
                    return
                result = outcome
        except asyncio.CancelledError:
            if call not in self._cut:
                self._settle(call, call.unfinished(self._stop_reason))
            raise
        except (KeyboardInterrupt, SystemExit) as exc:  # deferred, see the module docstring
            self._settle(call, call.unfinished(f"the tool raised {type(exc).__name__}"))
            if self._interrupt is None:
                self._interrupt = exc
                self._stop_reason = f"a sibling call raised {type(exc).__name__}"
                # Started eagerly, the call raised inside _launch, before the later calls
                # had tasks to cancel: none of them may start now (an eager start would
                # run it at once). No more early starts, and _run_batch stops launching.
                self._early.open = False
                self._scope.cancel_all()
        else:
            self._settle(call, result)

    def _settle(self, call: TurnCall, result: ToolResult) -> None:
        """Record a call's one result; the first one wins."""
        if call.result is not None:  # answered (or discarded with its result)
            return
        earlier = self._ran_before.pop(call.index, None) if self._ran_before else None
        if earlier is not None:
            result = outcomes.with_earlier_run(result, earlier.name, earlier.reason)
        # call.answer(result), written out: once per call.
        assert DONE in call.state.successors, f"call {call.state} -> done"
        call.state = DONE
        call.result = result
        if self._on_result is not None:
            self._on_result(call.index, result)
        if self._on_call is not None:
            self._on_call(call.record(result), result)

    # -- discarding early starts -------------------------------------------------------------

    def _discard(self, call: TurnCall, reason: str) -> None:
        """Cancel an early start; its (cancelled) result stays out of the turn's results."""
        if call.task is None or call.state is DISCARDED:
            return
        request = call.request
        ran = call.started or call.answered
        # Set directly, not through _settle: no result event for a call that is replaced.
        if call.result is None:
            call.result = call.unfinished(reason)
        call.advance(DISCARDED)
        call.task.cancel()
        item = Discarded(call.index, request.id, request.name, reason, ran, call=call.record())
        self.discarded.append(item)
        self._dropped += 1
        if ran:
            self._ran_before[call.index] = item

    def _discard_all(self, reason: str) -> None:
        for call in self._by_index.values():
            self._discard(call, reason)


def _stop_reason(exc: BaseException | None) -> str:
    if isinstance(exc, asyncio.CancelledError):
        return "the run was cancelled"
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        return f"the run was interrupted ({type(exc).__name__})"
    return f"the run stopped: {describe(exc)}"
