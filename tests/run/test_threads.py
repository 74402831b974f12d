"""The worker pool: daemon threads, reuse, abandoned jobs.

Synchronised with events, never with sleeps, and through the pool's public interface
only: ``submit``, ``Job.abandon``, ``Job.ended``.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from toolwire.run._threads import WorkerPool, shared_pool

from .helpers import run


def test_results_and_exceptions_come_back_on_the_loop() -> None:
    pool = WorkerPool("t1")

    async def body() -> tuple[int, str]:
        value = await pool.submit(lambda: 41 + 1).future

        def fail() -> None:
            raise ValueError("in thread")

        with pytest.raises(ValueError, match="in thread"):
            await pool.submit(fail).future
        return value, "ok"

    assert run(body()) == (42, "ok")


def test_stop_iteration_reaches_the_caller_as_an_error() -> None:
    """``future.set_exception(StopIteration)`` raises inside the loop's callback: the
    caller used to wait forever."""
    pool = WorkerPool("t1b")

    async def body() -> None:
        with pytest.raises(RuntimeError, match="StopIteration") as info:
            await pool.submit(lambda: next(iter([]))).future
        assert isinstance(info.value.__cause__, StopIteration)

    run(body())


def test_threads_are_daemons_and_reused() -> None:
    pool = WorkerPool("t2")
    names: list[str] = []

    def where() -> bool:
        names.append(threading.current_thread().name)
        return threading.current_thread().daemon

    async def body() -> list[bool]:
        out = []
        for _ in range(5):
            out.append(await pool.submit(where).future)
        return out

    assert run(body()) == [True] * 5
    assert len(set(names)) == 1  # sequential jobs share one thread


def test_an_abandoned_running_job_does_not_block_the_next_one() -> None:
    pool = WorkerPool("t3")
    started, release = threading.Event(), threading.Event()
    threads: list[str] = []

    def stuck() -> str:
        threads.append(threading.current_thread().name)
        started.set()
        release.wait(30)
        return "late"

    def fresh() -> str:
        threads.append(threading.current_thread().name)
        return "fresh"

    async def body() -> tuple[bool, str, bool]:
        job = pool.submit(stuck)
        await asyncio.to_thread(started.wait, 30)  # the worker is inside the job now
        job.future.cancel()
        was_running = job.abandon()
        result: str = await pool.submit(fresh).future  # a new thread: the old one is stuck
        release.set()
        await job.ended  # the abandoned job's end still reaches the loop
        return was_running, result, job.running

    try:
        was_running, result, still_running = run(body())
    finally:
        release.set()
    assert (was_running, result, still_running) == (True, "fresh", False)
    assert len(set(threads)) == 2


def test_a_job_abandoned_before_a_thread_took_it_never_runs() -> None:
    pool = WorkerPool("t4")
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def busy() -> None:
        started.set()
        release.wait(30)

    async def body() -> tuple[bool, bool]:
        first = pool.submit(busy)
        await asyncio.to_thread(started.wait, 30)
        first.future.cancel()
        first.abandon()  # its thread leaves the pool when busy() returns
        skipped = pool.submit(lambda: ran.append("ran"))
        taken = skipped.abandon()
        skipped.future.cancel()
        release.set()
        await skipped.ended  # resolved whether it ran or was skipped
        return taken, skipped.started

    try:
        taken, started_flag = run(body())
    finally:
        release.set()
    # Whichever came first, the claim or the abandonment, the job ran only if claimed.
    assert started_flag is taken
    assert ran == (["ran"] if taken else [])


def test_shared_pool_is_one_pool() -> None:
    assert shared_pool() is shared_pool()
