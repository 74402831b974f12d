"""TaskScope: nothing outlives it, and the body's error passes through unwrapped."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolwire.run._scope import TaskScope, deadline, task_maker

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


def test_a_scope_made_without_entering_it_is_open_and_its_exit_ends_its_tasks() -> None:
    """A turn makes its scope at its first call, inside its own block, and only exits
    it: the scope's entry may do nothing."""

    async def body() -> list[str]:
        log: list[str] = []

        async def child(name: str, wait: bool) -> None:
            try:
                if wait:
                    await asyncio.Event().wait()
                await asyncio.sleep(0)
                log.append(f"{name} done")
            except asyncio.CancelledError:
                log.append(f"{name} cancelled")
                raise

        finished = TaskScope(eager=True)
        finished.start(child("a", wait=False))
        await finished.__aexit__(None, None, None)  # waits for it
        failed = TaskScope(eager=True)
        failed.start(child("b", wait=True))
        await asyncio.sleep(0)
        error = KeyError("body")
        await failed.__aexit__(KeyError, error, None)  # cancels it, then waits
        return log

    assert run(body()) == ["a done", "b cancelled"]


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


def test_tasks_are_made_as_the_loop_would_make_them() -> None:
    # A plain loop's tasks are made directly (what its create_task makes); a task
    # factory or debug mode keeps loop.create_task, and so the factory is used.
    made: list[object] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any) -> asyncio.Task[Any]:
        made.append(coro)
        return asyncio.Task(coro, loop=loop)

    async def body(setup: str) -> tuple[bool, bool]:
        loop = asyncio.get_running_loop()
        if setup == "factory":
            loop.set_task_factory(factory)
        elif setup == "debug":
            loop.set_debug(True)
        direct = task_maker(loop) != loop.create_task
        tasks: list[asyncio.Task[Any] | None] = []

        async def child() -> None:
            tasks.append(asyncio.current_task())

        async with TaskScope() as scope:
            started = scope.start(child())
        return tasks == [started] and started.get_loop() is loop, direct

    assert run(body("plain")) == (True, True)  # the tool ran in its own task
    assert run(body("debug")) == (True, False)
    assert run(body("factory")) == (True, False)
    assert [c for c in made if getattr(c, "__name__", "") == "child"]  # the factory made it
