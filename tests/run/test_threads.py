"""The worker pool: daemon threads, reuse, abandoned jobs."""

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


def test_abandoned_jobs_do_not_block_the_next_one() -> None:
    pool = WorkerPool("t3")
    release = threading.Event()
    ran: list[str] = []

    async def body() -> str:
        stuck = pool.submit(lambda: release.wait(10))
        await asyncio.sleep(0.01)
        stuck.future.cancel()
        stuck.abandon()
        result: str = await pool.submit(lambda: "fresh").future
        return result

    try:
        assert run(body()) == "fresh"
    finally:
        release.set()
    assert ran == []


def test_a_job_abandoned_before_it_started_is_skipped() -> None:
    pool = WorkerPool("t4")
    release = threading.Event()
    ran: list[str] = []

    async def body() -> str:
        busy = pool.submit(lambda: release.wait(10))  # the only thread, busy
        await asyncio.sleep(0.01)
        with pool._lock:  # queue the next job for the busy thread, not a new one
            pool._idle += 1
        skipped = pool.submit(lambda: ran.append("ran"))
        skipped.abandon()
        skipped.future.cancel()
        release.set()
        await busy.future
        result: str = await pool.submit(lambda: "next").future
        return result

    try:
        assert run(body()) == "next"
    finally:
        release.set()
    assert ran == []


def test_shared_pool_is_one_pool() -> None:
    assert shared_pool() is shared_pool()
