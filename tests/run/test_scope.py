"""TaskScope: nothing outlives it, and the body's error passes through unwrapped."""

from __future__ import annotations

import asyncio

import pytest

from toolwire.run._scope import TaskScope, deadline

from .helpers import run


def test_waits_for_its_tasks() -> None:
    async def body() -> list[int]:
        done: list[int] = []

        async def child(n: int) -> None:
            await asyncio.sleep(0)
            done.append(n)

        async with TaskScope() as scope:
            for n in range(3):
                scope.start(child(n))
        return done

    assert sorted(run(body())) == [0, 1, 2]


def test_error_cancels_children_and_is_not_wrapped() -> None:
    async def body() -> list[str]:
        log: list[str] = []

        async def child() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                log.append("cancelled")
                raise

        with pytest.raises(KeyError):
            async with TaskScope() as scope:
                scope.start(child())
                await asyncio.sleep(0)
                raise KeyError("body")
        return log

    assert run(body()) == ["cancelled"]


def test_cancellation_while_draining_cancels_children_first() -> None:
    async def body() -> list[str]:
        log: list[str] = []

        async def child() -> None:
            try:
                await asyncio.Event().wait()
            finally:
                log.append("child gone")

        async def owner() -> None:
            async with TaskScope() as scope:
                scope.start(child())
            log.append("unreachable")

        task = asyncio.create_task(owner())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return log

    assert run(body()) == ["child gone"]


def test_deadline() -> None:
    async def body() -> None:
        async with deadline(0.01):
            await asyncio.Event().wait()

    with pytest.raises(TimeoutError):
        run(body())

    async def unlimited() -> str:
        async with deadline(None):
            await asyncio.sleep(0)
        return "ok"

    assert run(unlimited()) == "ok"
