"""Worker threads for sync tools: daemon threads, reused, and safe to abandon.

A sync tool runs in a worker thread so that it cannot block the event loop. Python
cannot kill a thread, so a sync tool that never returns keeps its thread forever;
the executor then *abandons* the call (its result is ``timeout`` or ``cancelled``)
and this pool must make sure the abandoned thread costs nothing else:

* the threads are daemons, so a stuck tool never blocks interpreter exit — the
  default ``ThreadPoolExecutor`` (what ``asyncio.to_thread`` uses) joins its threads
  at exit, and ``asyncio.run`` waits for it, so one stuck tool would hang the
  program;
* a thread whose job was abandoned leaves the pool when (if ever) the job ends, and
  the pool starts a fresh thread for the next job instead of waiting for it;
* a job whose caller gave up before a thread picked it up is skipped, never run;
* ``Job.ended`` resolves when the function returns, abandoned or not, so the executor
  can keep an abandoned call with side effects from overlapping the next one.

How many jobs run at once is the executor's business (an ``asyncio.Semaphore`` per
event loop, released when the caller stops waiting); this pool starts a thread
whenever no idle one is available.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Job", "WorkerPool", "shared_pool"]


class Job:
    """One sync call handed to a worker thread."""

    __slots__ = ("_lock", "abandoned", "ended", "fn", "future", "loop", "started")

    def __init__(
        self, fn: Callable[[], Any], loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]
    ) -> None:
        self.fn = fn
        self.loop = loop
        self.future = future
        self.started = False
        self.abandoned = False
        self._lock = threading.Lock()  # makes "taken by a thread" and "abandoned" exclusive
        # Resolves (with None) when the function has returned or raised, even after the
        # caller stopped waiting: until then an abandoned job is still running.
        self.ended: asyncio.Future[None] = loop.create_future()

    @property
    def running(self) -> bool:
        """The function started and has not returned yet (as far as the loop knows)."""
        return self.started and not self.ended.done()

    def abandon(self) -> bool:
        """The caller stopped waiting: skip the job if no thread took it yet.

        Returns:
            Whether a thread had taken it (it may still be running).
        """
        with self._lock:
            self.abandoned = True
            return self.started

    def claim(self) -> bool:
        """A worker thread takes the job: False if its caller already gave up."""
        with self._lock:
            if self.abandoned:
                return False
            self.started = True
            return True


class WorkerPool:
    """Daemon worker threads fed from one queue."""

    def __init__(self, name: str = "toolwire-tool") -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._count = 0

    def submit(self, fn: Callable[[], Any]) -> Job:
        """Queue ``fn`` for a worker; its result lands in ``job.future`` on this loop."""
        loop = asyncio.get_running_loop()
        job = Job(fn, loop, loop.create_future())
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self._count += 1
            else:
                self._idle -= 1  # reserved for this job; the worker does not count it again
        if spawn:
            threading.Thread(
                target=self._work, name=f"{self._name}-{self._count}", daemon=True
            ).start()
        self._jobs.put(job)
        return job

    def _work(self) -> None:
        """A worker: run jobs until one is abandoned while it runs."""
        while True:
            job = self._jobs.get()
            if not job.claim():  # the caller gave up before any thread took it: skip
                with self._lock:
                    self._idle += 1
                _deliver(job, None, failed=False)  # only ``ended``: it never ran
                continue
            value, failed = self._call(job)
            if job.abandoned:
                _deliver(job, None, failed=False)  # only ``ended``: nobody awaits the value
                return  # the caller stopped waiting for this thread; a fresh one takes over
            # Idle before the result is out: the caller's next job finds this thread.
            with self._lock:
                self._idle += 1
            _deliver(job, value, failed=failed)

    @staticmethod
    def _call(job: Job) -> tuple[Any, bool]:
        """Run one job: ``(value, False)``, or ``(exception, True)``."""
        try:
            return job.fn(), False
        except BaseException as exc:  # handed to the awaiting coroutine, which decides
            return exc, True


def _deliver(job: Job, value: Any, *, failed: bool) -> None:
    """Set the job's future from the loop's own thread (futures are not thread-safe)."""
    with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
        job.loop.call_soon_threadsafe(_settle, job, value, failed)


def _settle(job: Job, value: Any, failed: bool) -> None:
    if not job.ended.done():
        job.ended.set_result(None)
    future = job.future
    if job.abandoned or future.done():  # the caller timed out or was cancelled meanwhile
        return
    if failed:
        future.set_exception(_raisable(value))
    else:
        future.set_result(value)


def _raisable(exc: BaseException) -> BaseException:
    """What a future can hold: ``set_exception`` refuses ``StopIteration`` (a
    ``TypeError`` inside the loop's callback, which left the caller waiting forever)."""
    if isinstance(exc, StopIteration):
        error = RuntimeError(f"the tool raised StopIteration: {exc}")
        error.__cause__ = exc
        return error
    return exc


_SHARED = WorkerPool()


def shared_pool() -> WorkerPool:
    """The process-wide pool (threads are reused across runs and event loops)."""
    return _SHARED
