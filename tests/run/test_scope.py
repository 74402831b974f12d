"""TaskScope: nothing outlives it, and the body's error passes through unwrapped."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolwire.run._scope import TaskScope, all_done, deadline, task_maker

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
    """The owner is cancelled while the drain waits for the first of three children:
    all three are cancelled, and the cancellation reaches the owner only after the
    slowest (it takes a few loop passes to clean up) is gone."""

    async def body() -> list[str]:
        log: list[str] = []

        async def child(name: str, cleanup: int) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                for _ in range(cleanup):
                    await asyncio.sleep(0)
                log.append(f"{name} gone")
                raise

        async def owner() -> None:
            async with TaskScope() as scope:
                for name, cleanup in (("a", 0), ("b", 5), ("c", 1)):
                    scope.start(child(name, cleanup))
            log.append("unreachable")

        owning = asyncio.create_task(owner())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        owning.cancel()
        with pytest.raises(asyncio.CancelledError):
            await owning
        log.append("owner cancelled")
        return log

    assert run(body()) == ["a gone", "c gone", "b gone", "owner cancelled"]


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


class _WatchedTask(asyncio.Task):  # type: ignore[type-arg]
    """A real task that counts the done callbacks put on it (asyncio.wait puts one on
    every task it waits for, and each one that ends then schedules a loop handle)."""

    callbacks = 0

    def add_done_callback(self, fn: Any, *, context: Any = None) -> None:
        type(self).callbacks += 1
        super().add_done_callback(fn, context=context)


def _watch(loop: asyncio.AbstractEventLoop, coro: Any) -> asyncio.Task[Any]:
    return _WatchedTask(coro, loop=loop)


def test_a_drain_waits_once_for_children_that_end_together() -> None:
    """Cancelled at once, ten children end in one loop pass: the drain waits for the
    first and finds the others done, one done callback in all (asyncio.wait of the ten
    put one on each). None is left running when the exit returns."""

    async def body() -> tuple[int, list[bool]]:
        asyncio.get_running_loop().set_task_factory(_watch)
        _WatchedTask.callbacks = 0
        scope = TaskScope()
        tasks = [scope.start(asyncio.Event().wait()) for _ in range(10)]
        await asyncio.sleep(0)  # each child waits on its event
        await scope.__aexit__(KeyError, KeyError("body"), None)
        return _WatchedTask.callbacks, [t.cancelled() for t in tasks]

    callbacks, cancelled = run(body())
    assert cancelled == [True] * 10
    assert callbacks == 1


def test_a_task_done_when_the_wait_reaches_it_costs_no_wait() -> None:
    async def body() -> int:
        asyncio.get_running_loop().set_task_factory(_watch)
        _WatchedTask.callbacks = 0

        async def quick() -> None:
            return None

        tasks = [asyncio.get_running_loop().create_task(quick()) for _ in range(5)]
        await asyncio.sleep(0)  # every one ran to its end
        assert all(t.done() for t in tasks)
        await all_done(tasks)
        return _WatchedTask.callbacks

    assert run(body()) == 0


def test_a_cancelled_child_is_not_the_drains_own_cancellation() -> None:
    """A child cancelled by someone else while the scope waits for it ends that wait
    like a finished one: the owner is not cancelled, and the drain goes on to the
    children still running."""

    async def body() -> list[str]:
        log: list[str] = []
        go_on = asyncio.Event()

        async def stuck() -> None:
            await asyncio.Event().wait()

        async def later() -> None:
            await go_on.wait()
            log.append("later done")

        async def owner() -> None:
            async with TaskScope() as scope:
                first = scope.start(stuck())
                scope.start(later())
                asyncio.get_running_loop().call_soon(first.cancel)
            log.append("owner went on")

        owning = asyncio.create_task(owner())
        for _ in range(5):
            await asyncio.sleep(0)
        log.append("first cancelled")
        go_on.set()
        await owning
        return log

    assert run(body()) == ["first cancelled", "later done", "owner went on"]


def test_join_waits_for_every_task_and_its_cancellation_reaches_none() -> None:
    """``join`` waits without owning the outcome: cancelled, it leaves the tasks to the
    scope's exit, which still waits for them."""

    async def body() -> list[str]:
        log: list[str] = []
        go_on = asyncio.Event()

        async def child(name: str) -> None:
            await go_on.wait()
            log.append(f"{name} done")

        scope = TaskScope()
        scope.start(child("a"))
        scope.start(child("b"))
        joining = asyncio.create_task(scope.join())
        await asyncio.sleep(0)
        joining.cancel()
        with pytest.raises(asyncio.CancelledError):
            await joining
        log.append("join cancelled")
        joined = asyncio.create_task(scope.join())
        await asyncio.sleep(0)
        go_on.set()
        await joined
        log.append("joined")
        await scope.__aexit__(None, None, None)
        return log

    assert run(body()) == ["join cancelled", "a done", "b done", "joined"]
