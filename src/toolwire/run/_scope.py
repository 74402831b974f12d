"""A minimal task scope for total tasks, and a per-call deadline that works on 3.10.

Why not ``asyncio.TaskGroup``: it exists from Python 3.11 only (toolwire supports
3.10), and it wraps any exception raised in its body in an ``ExceptionGroup`` — a
``TurnError`` from the model stream or a ``KeyboardInterrupt`` would reach the caller
as a group to unpack. Why not anyio's task groups: the same wrapping, and about four
times the per-task cost of a bare ``asyncio`` task (bench/bench_executor.py's
overhead table is where that matters).

This is the one cancel-and-drain loop of the package: the executor's turn runs in one,
and ``AgentStream`` owns its producer task through one (``aclose``). Its wait,
:func:`all_done`, is the package's one wait for a set of tasks without a time limit
(the executor waits for a batch with it too).

The executor's tasks are *total*: each one catches its tool's failures and records a
result, so a child never has an error to propagate. That leaves a scope with one job,
the one structured concurrency exists for: no task outlives the scope. On exit —
normal, error or cancellation — every child still running is cancelled and awaited;
a cancellation arriving while the scope waits re-cancels the children and is
re-raised once they are gone. The body's own exception passes through unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
from collections.abc import AsyncIterator, Coroutine, Iterable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Protocol

__all__ = ["TaskMaker", "TaskScope", "all_done", "deadline", "task_maker"]


class TaskMaker(Protocol):
    """``(coro, name=...) -> task``: ``asyncio.Task`` or a loop's ``create_task``."""

    def __call__(
        self, coro: Coroutine[Any, Any, None], /, *, name: str | None = ...
    ) -> asyncio.Task[None]: ...


class TaskScope:
    """Owns tasks that never raise; cancels and awaits whatever is left on exit.

    Args:
        eager: Start each task eagerly where Python can (:func:`task_maker`): its
            coroutine runs inside :meth:`start` up to its first suspension, and one that
            never suspends is done when :meth:`start` returns. For owners whose
            coroutines are written for it (the executor's calls), not for a producer
            that must not begin before its consumer is ready.
    """

    __slots__ = ("_eager", "_eager_loop", "_new_task", "_tasks")

    def __init__(self, *, eager: bool = False) -> None:
        self._tasks: set[asyncio.Future[None]] = set()
        self._new_task: TaskMaker | None = None
        self._eager = eager
        # The running loop, once a task of this scope started eagerly on a stdlib loop
        # (3.12+, task_maker): start() then calls asyncio.Task with its keywords itself.
        self._eager_loop: asyncio.AbstractEventLoop | None = None

    async def __aenter__(self) -> TaskScope:
        """Nothing to do: a scope is open once made. (An owner may make one inside its
        own block and only exit it: the executor's turn makes its scope at its first
        call, so a turn without calls makes none.)"""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self.cancel_all()
        await self._drain()

    async def aclose(self) -> None:
        """Cancel every task and wait until all are gone (for owners that are not
        ``async with`` blocks, such as an async iterator's ``aclose``)."""
        self.cancel_all()
        await self._drain()

    async def cancel(self, tasks: Iterable[asyncio.Future[None]]) -> None:
        """Cancel some of the scope's tasks and wait until they are gone (the rest run on)."""
        chosen = {task for task in tasks if task in self._tasks}
        for task in chosen:
            task.cancel()
        await self._wait(chosen)

    def start(self, coro: Coroutine[Any, Any, None], name: str | None = None) -> asyncio.Task[None]:
        """Run ``coro`` as a task owned by this scope.

        A finished task stays in the scope's set until the scope ends or :meth:`join`
        sees it done (every wait skips done tasks): a done callback to drop it would
        cost one more event-loop handle per task, and a scope lives one turn. A task
        that ended before this returned (an eager start whose coroutine never
        suspended) is not kept at all: there is nothing to cancel or wait for, and the
        set would keep it, with its context, alive until the scope ends.

        ``name``: the task's name (``None``: asyncio's ``Task-N``). A name given is
        taken as it is, where asyncio formats ``Task-N`` for every unnamed task (on
        3.11, more than the keyword argument costs: ~570 instructions a task).

        An eager scope's task may have run, or even finished, before this returns (and
        before the caller holds it): see ``eager``.
        """
        loop = self._eager_loop
        if loop is not None:
            # task_maker's partial, written out: a partial holding keywords merges them
            # with the call's into a new dict for every task (~600 instructions on 3.12)
            task = asyncio.Task(coro, loop=loop, name=name, eager_start=True)  # type: ignore[call-arg,unused-ignore]
        else:
            task = (self._new_task or self._find_maker())(coro, name=name)
        if not task.done():  # started eagerly, it may have ended already: nothing to keep
            self._tasks.add(task)
        return task

    async def join(self) -> None:
        """Wait until every task of the scope is done, cancelling none.

        A cancellation of the waiter is raised at once and reaches no task: the owner's
        exit cancels and drains them. The tasks seen to end are forgotten, so that an
        owner who waits for all its tasks and then exits (the executor's turn) looks at
        each task once, not once here and again in the exit's drain.
        """
        tasks = self._tasks
        while tasks:  # again if a task started while this waited
            waited = list(tasks)
            await all_done(waited)
            tasks.difference_update(waited)

    def _find_maker(self) -> TaskMaker:
        """The running loop's way to make a task (:func:`task_maker`), once per scope."""
        loop = asyncio.get_running_loop()
        new_task = self._new_task = task_maker(loop, eager=self._eager)
        if isinstance(new_task, functools.partial):  # eager, on a stdlib loop: see start
            self._eager_loop = loop
        return new_task

    def cancel_all(self) -> None:
        """Cancel every task still running."""
        for task in self._tasks:
            if not task.done():
                task.cancel()

    async def _drain(self) -> None:
        """Wait until no task is left; a cancellation meanwhile cancels them first."""
        await self._wait(self._tasks)

    @staticmethod
    async def _wait(tasks: set[asyncio.Future[None]]) -> None:
        """Wait until ``tasks`` (a live set) is done; a cancellation meanwhile cancels
        them, and is re-raised once none is left.

        Each round waits for the tasks running when it began, one at a time
        (:func:`all_done`), then looks again for tasks started meanwhile. A cancelled
        child ends its wait like any other (``asyncio.wait`` returns, where ``await
        task`` would raise the child's ``CancelledError`` here, as if the waiter were
        cancelled): only the waiter's own cancellation is caught below.
        """
        interrupted: BaseException | None = None
        while True:
            running = [task for task in tasks if not task.done()]
            if not running:
                break
            try:
                await all_done(running)
            except asyncio.CancelledError as exc:  # re-raised below, once nothing is left
                interrupted = exc
                for task in running:
                    task.cancel()
        if interrupted is not None:
            raise interrupted


async def all_done(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Wait until every task of ``tasks`` is done, one at a time, in their order.

    A task already done when the wait reaches it costs a ``done()`` test, nothing more;
    a task still running costs one ``asyncio.wait`` of it alone. Tasks that end together
    (a batch of calls, the children of a scope cancelled at once) are mostly done by the
    time the first wait returns, so this is a wait or two, where ``asyncio.wait`` of
    them all put a done callback on every task, and every one that ended then scheduled
    an event-loop handle to run it (bench/README.md, issue 30's thirteenth pass).

    A cancelled task ends its wait as a finished one does (nothing is raised for it). A
    cancellation of the waiter is raised here and does not reach the tasks: the caller
    decides what it means for them (:class:`TaskScope` cancels them and waits again).
    """
    for task in tasks:
        if not task.done():
            await asyncio.wait((task,))


def task_maker(loop: asyncio.AbstractEventLoop, *, eager: bool = False) -> TaskMaker:
    """How to make the running ``loop``'s tasks: ``loop.create_task``, or the
    ``asyncio.Task`` it would make, made directly.

    A stdlib event loop with no task factory and no debug mode makes exactly
    ``asyncio.Task(coro, loop=loop)``; its ``create_task`` first calls two Python
    methods (itself and ``_check_closed``: the loop runs, so it is open), once per tool
    call. ``asyncio.Task(coro)`` is that task: with no ``loop`` it takes the running
    loop, found in C, where a ``partial`` passing ``loop=`` built a keyword dict per
    task for the constructor to parse (~800 instructions of a task's ~13,000). Any
    other loop, a task factory or debug mode: ``loop.create_task`` itself.

    ``eager`` (Python 3.12+, such a stdlib loop only): the task starts eagerly
    (``eager_start=True``): its first step runs now, inside the constructor, with
    ``current_task()`` swapped to the new task for that step, so a coroutine that
    finishes without suspending costs no ``call_soon``, no ``Handle`` and no loop
    iteration (~7.8 k instructions a task where a scheduled one costs ~23 k). The
    loop is passed: 3.12's constructor asks the ``loop`` argument, not the running
    loop it found, whether it runs. Python 3.10 and 3.11 have no eager start, and
    running the first step by hand is not one: without the current-task swap the
    step would run as the caller's task (its ``current_task()``, ``asyncio.timeout``
    and cancellation would be the caller's), so their tasks stay scheduled.
    """
    if (
        isinstance(loop, asyncio.BaseEventLoop)
        and type(loop).create_task is asyncio.BaseEventLoop.create_task
        and loop.get_task_factory() is None
        and not loop.get_debug()
    ):
        if eager and sys.version_info >= (3, 12):
            return functools.partial(asyncio.Task, loop=loop, eager_start=True)
        return asyncio.Task
    return loop.create_task


def deadline(seconds: float | None) -> AbstractAsyncContextManager[Any]:
    """A scope that raises ``TimeoutError`` when ``seconds`` pass (``None``: no limit).

    Also when the body swallowed the cancellation and returned anyway, late: a call that
    ran past its deadline is never reported as a success.
    """
    if sys.version_info >= (3, 11):
        return _Deadline(seconds)
    return _anyio_deadline(seconds)  # pragma: no cover - Python 3.10 only


class _Deadline:
    """``asyncio.timeout``, plus the check for a body that ignored its cancellation."""

    __slots__ = ("_timeout",)

    def __init__(self, seconds: float | None) -> None:
        self._timeout: Any = asyncio.timeout(seconds)  # type: ignore[attr-defined,unused-ignore]

    async def __aenter__(self) -> _Deadline:
        await self._timeout.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        suppress: bool | None = await self._timeout.__aexit__(exc_type, exc, tb)
        if exc_type is None and self._timeout.expired():
            raise TimeoutError("it ignored the cancellation at its deadline and returned late")
        return suppress


@contextlib.asynccontextmanager
async def _anyio_deadline(seconds: float | None) -> AsyncIterator[None]:  # pragma: no cover
    """Python 3.10 has no ``asyncio.timeout``; anyio's scope raises ``TimeoutError`` too."""
    import anyio

    with anyio.fail_after(seconds) as scope:
        yield
    if scope.cancel_called:  # the body swallowed the cancellation and returned late
        raise TimeoutError("it ignored the cancellation at its deadline and returned late")
