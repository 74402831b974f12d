"""Calls started eagerly (Python 3.12+): a tool that never suspends runs as its call
starts, and every promise of the executor still holds.

On Python 3.12+ the executor's tasks start with ``eager_start=True`` (a stdlib loop
without a task factory or debug mode): a call's first step runs inside
``TurnRun.ready`` or ``_run_batch``, and its result may be settled before its task is
even held. On 3.10 and 3.11 the tasks are scheduled as before. Each test states what
differs between the two and holds what must not: the order a stream consumer sees,
one result per call, the interrupt, the tool's own task, its deadline, its retries and
a discarded start.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import weakref
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from toolwire import Agent
from toolwire.messages import ToolCall, ToolResult, ToolStatus
from toolwire.run._scope import TaskScope
from toolwire.run.events import ToolCallRunning, ToolResultReady
from toolwire.run.execute import ExecutionOptions, Executor
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import tool
from toolwire.turn import ToolRequest
from toolwire.wire.events import ToolCallReady, ToolCallStarted

from .helpers import request, run

EAGER = sys.version_info >= (3, 12)  # asyncio.Task(..., eager_start=True) exists


def ready(req: ToolRequest) -> ToolCallReady:
    return ToolCallReady(req.index, ToolCall(req.id, req.name, req.raw_arguments), req)


@tool(concurrency_safe=True, side_effects=False)
async def look(q: str) -> str:
    """Reads without suspending."""
    return f"saw {q}"


# -- the scope -------------------------------------------------------------------------------


def test_an_eager_scope_runs_a_task_that_never_suspends_to_its_end_as_it_starts() -> None:
    async def body(eager: bool) -> tuple[bool, bool]:
        ran: list[str] = []

        async def child() -> None:
            ran.append("ran")

        async with TaskScope(eager=eager) as scope:
            task = scope.start(child(), "child")
            done_at_start = task.done() and ran == ["ran"]
        return done_at_start, ran == ["ran"]

    assert run(body(eager=True)) == (EAGER, True)
    assert run(body(eager=False)) == (False, True)  # the agent stream's producer scope


def test_a_task_factory_or_debug_mode_keeps_the_loops_own_tasks() -> None:
    async def body(setup: str) -> bool:
        loop = asyncio.get_running_loop()
        if setup == "factory":
            loop.set_task_factory(lambda loop, coro: asyncio.Task(coro, loop=loop))
        else:
            loop.set_debug(True)

        async def child() -> None:
            pass

        async with TaskScope(eager=True) as scope:
            task = scope.start(child())
            return task.done()

    assert run(body("factory")) is False
    assert run(body("debug")) is False


# -- when a call's code runs, and what a stream consumer sees ----------------------------------


def test_a_call_that_never_suspends_is_answered_inside_ready() -> None:
    """On 3.12+ the result is settled (and ``on_result`` told) before ``ready`` returns,
    before the call's task is held; on 3.11 at the stream's next suspension."""
    told: list[int] = []
    req = request("look", {"q": "a"})

    async def body() -> tuple[bool, list[ToolResult]]:
        turn = Executor([look]).turn(on_result=lambda index, result: told.append(index))
        async with turn:
            turn.started(ToolCallStarted(0, req.id, req.name))
            turn.ready(ready(req))
            answered_in_ready = told == [0]
            await turn.finish([req])
        return answered_in_ready, turn.results()

    answered_in_ready, results = run(body())
    assert answered_in_ready is EAGER
    assert told == [0]  # once
    assert [(r.status, r.content) for r in results] == [(ToolStatus.OK, "saw a")]


def test_a_stream_consumer_sees_each_calls_ready_then_running_then_result() -> None:
    """The events of each call keep their order when the call is answered inside the
    stream loop; eagerly, results arrive while later calls still stream."""
    calls = [("look", {"q": str(n)}) for n in range(4)]
    model = ScriptedModel([tool_call_turn(*calls), text_turn("done")])

    async def consume() -> list[Any]:
        stream = Agent(model, [look]).run_stream("go")
        return [event async for event in stream]

    events = run(consume())
    order: dict[int, list[str]] = {}
    for event in events:
        if isinstance(event, ToolCallReady):
            order.setdefault(event.index, []).append("ready")
        elif isinstance(event, ToolCallRunning):
            order.setdefault(event.index, []).append("running")
        elif isinstance(event, ToolResultReady):
            order.setdefault(event.index, []).append("result")
    assert order == {n: ["ready", "running", "result"] for n in range(4)}
    kinds = [type(e) for e in events if isinstance(e, (ToolCallReady, ToolResultReady))]
    first_result, last_ready = (
        kinds.index(ToolResultReady),
        len(kinds) - 1 - kinds[::-1].index(ToolCallReady),
    )
    assert (first_result < last_ready) is EAGER


# -- a KeyboardInterrupt raised as the call starts ---------------------------------------------


@tool(concurrency_safe=True, side_effects=False)
async def interrupt() -> str:
    """Ctrl-C, before any suspension."""
    raise KeyboardInterrupt


def _interrupted_turn(mode: str) -> tuple[list[ToolStatus], list[str]]:
    ran: list[str] = []

    @tool(concurrency_safe=True, side_effects=False)
    async def after(n: int) -> str:
        """Would run after the interrupt."""
        ran.append(str(n))
        return "ran"

    reqs = [
        request("interrupt", index=0, call_id="i"),
        request("after", {"n": 1}, index=1),
        request("after", {"n": 2}, index=2),
    ]
    executor = Executor([interrupt, after])
    early = mode != "batch"

    async def body(turn: Any) -> None:
        if mode == "eager task factory":  # the loop's own eager tasks: the same rules
            asyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)  # type: ignore[attr-defined,unused-ignore]
        async with turn:
            if early:
                for req in reqs:
                    turn.ready(ready(req))
                    if mode != "streaming":
                        await asyncio.sleep(0)  # the stream suspends between calls
            await turn.finish(reqs)

    turn = executor.turn(early=early)
    with pytest.raises(KeyboardInterrupt):
        run(body(turn))
    return [r.status for r in turn.results()], ran


@pytest.mark.parametrize(
    "mode",
    [
        "batch",
        "streaming",
        "streaming with pauses",
        pytest.param(
            "eager task factory",
            marks=pytest.mark.skipif(sys.version_info < (3, 12), reason="3.12+"),
        ),
    ],
)
def test_a_keyboard_interrupt_as_the_first_call_starts_runs_no_later_call(mode: str) -> None:
    """Eagerly, the interrupt is raised inside the first call's start, before the later
    calls' tasks exist: none of them is started, each gets its unfinished result. Calls
    that stream after the interrupt do not start early either, on every version."""
    statuses, ran = _interrupted_turn(mode)
    assert statuses == [ToolStatus.CANCELLED, ToolStatus.NOT_EXECUTED, ToolStatus.NOT_EXECUTED]
    assert ran == []


# -- the call's own task: current_task, asyncio.timeout, anyio scopes, context --------------


def test_a_tool_runs_in_its_own_task_from_its_first_step() -> None:
    @tool(concurrency_safe=True, side_effects=False)
    async def whoami() -> str:
        """The name of the task running it (the executor names it by the call's id)."""
        task = asyncio.current_task()
        return task.get_name() if task is not None else "no task"

    reqs = [request("whoami", index=n, call_id=f"call-{n}") for n in range(2)]

    async def body() -> list[str]:
        turn = Executor([whoami]).turn()
        async with turn:
            for req in reqs:
                turn.ready(ready(req))
            await turn.finish(reqs)
        return [r.content for r in turn.results()]

    assert run(body()) == ["call-0", "call-1"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is 3.11+")
def test_a_tools_deadlines_cancel_its_own_task_not_the_stream() -> None:
    @tool(concurrency_safe=True, side_effects=False)
    async def bounded(kind: str) -> str:
        """Waits past a deadline of its own, asyncio's or anyio's; or sets one it meets."""
        if kind == "asyncio":
            try:
                async with asyncio.timeout(0):
                    await asyncio.Event().wait()
            except TimeoutError:
                return "asyncio timed out"
        elif kind == "anyio":
            with anyio.move_on_after(0) as scope:
                await anyio.sleep(10)
            return f"anyio moved on: {scope.cancelled_caught}"
        elif kind == "anyio-cancel":
            with anyio.CancelScope() as scope:
                scope.cancel()  # before any suspension: only this task's checkpoint sees it
                await anyio.lowlevel.checkpoint()
            return f"anyio cancelled itself: {scope.cancelled_caught}"
        async with asyncio.timeout(10):  # met without suspending
            return "asyncio in time"

    kinds = ["asyncio", "anyio", "anyio-cancel", "met"]
    reqs = [request("bounded", {"kind": k}, index=n) for n, k in enumerate(kinds)]

    async def body() -> tuple[list[str], bool]:
        turn = Executor([bounded]).turn()
        async with turn:
            for req in reqs:
                turn.ready(ready(req))
            await asyncio.sleep(0)  # the stream's task goes on: no deadline hit it
            await turn.finish(reqs)
        current = asyncio.current_task()
        return [
            r.content for r in turn.results()
        ], current is not None and current.cancelling() == 0

    contents, stream_untouched = run(body())
    assert contents == [
        "asyncio timed out",
        "anyio moved on: True",
        "anyio cancelled itself: True",
        "asyncio in time",
    ]
    assert stream_untouched


def test_a_context_variable_set_by_a_tool_stays_in_its_call() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="caller's")

    @tool(concurrency_safe=True, side_effects=False)
    async def setter() -> str:
        """Sets the variable in its first step."""
        var.set("the tool's")
        return var.get()

    async def body() -> tuple[str, str]:
        req = request("setter")
        turn = Executor([setter]).turn()
        async with turn:
            turn.ready(ready(req))
            seen = var.get()
            await turn.finish([req])
        return turn.results()[0].content, seen

    assert run(body()) == ("the tool's", "caller's")


# -- the runner's path: timeouts and retries ---------------------------------------------------


def test_timeouts_and_retries_hold_for_calls_started_eagerly() -> None:
    attempts: list[int] = []

    @tool(concurrency_safe=True, side_effects=False, timeout=5)
    async def quick() -> str:
        """Under a timeout, done without suspending."""
        return "quick"

    @tool(concurrency_safe=True, side_effects=False, timeout=0.01)
    async def stuck() -> str:
        """Past its timeout."""
        await asyncio.Event().wait()
        return "never"

    @tool(concurrency_safe=True, idempotent=True, retries=2)
    async def flaky() -> str:
        """Fails once, then works."""
        attempts.append(len(attempts))
        if len(attempts) == 1:
            raise RuntimeError("once")
        return "worked"

    async def no_wait(seconds: float) -> None:
        pass  # the backoff, without suspending: the retry runs in the same step

    reqs = [request(name, index=n) for n, name in enumerate(["quick", "stuck", "flaky"])]

    async def body() -> list[tuple[ToolStatus, str]]:
        turn = Executor([quick, stuck, flaky], sleep=no_wait).turn()
        async with turn:
            for req in reqs:
                turn.ready(ready(req))
            await turn.finish(reqs)
        return [(r.status, r.content) for r in turn.results()]

    results = run(body())
    assert results[0] == (ToolStatus.OK, "quick")
    assert results[1][0] is ToolStatus.TIMEOUT
    assert results[2] == (ToolStatus.OK, "worked")
    assert attempts == [0, 1]


# -- cancellation and discards ----------------------------------------------------------------


def test_cancelling_the_run_answers_a_call_that_started_eagerly_and_waits() -> None:
    started = []

    @tool(concurrency_safe=True, side_effects=False)
    async def wait() -> str:
        """Suspends for good after its first step."""
        started.append(asyncio.current_task())
        await asyncio.Event().wait()
        return "never"

    req = request("wait")
    turn = Executor([wait]).turn()

    async def body() -> None:
        async with turn:
            turn.ready(ready(req))
            await asyncio.sleep(0)
            assert started  # its first step ran (eagerly: inside ready)
            current = asyncio.current_task()
            assert current is not None
            current.cancel()
            await turn.finish([req])

    with pytest.raises(asyncio.CancelledError):
        run(body())
    assert [r.status for r in turn.results()] == [ToolStatus.CANCELLED]
    assert started[0] is not None and started[0].done()


def test_a_discarded_early_call_that_already_finished_gives_one_result() -> None:
    """The draft's start is replaced by the final turn's arguments; eagerly it had already
    finished (``ran``), and its replacement's result says so. One result in the turn."""
    draft = request("look", {"q": "draft"})
    final = request("look", {"q": "final"})
    told: list[str] = []

    async def body() -> tuple[list[ToolResult], bool]:
        turn = Executor([look]).turn(on_result=lambda index, result: told.append(result.content))
        async with turn:
            turn.ready(ready(draft))
            await turn.finish([final])
        [discarded] = turn.discarded
        return turn.results(), discarded.ran

    results, ran = run(body())
    assert ran is EAGER
    assert [r.content.split(" (")[0] for r in results] == ["saw final"]
    assert ("had already started" in results[0].content) is EAGER
    assert told[-1] == results[0].content
    assert told[:-1] == (["saw draft"] if EAGER else [])  # the draft's own, as it ended


# -- what a call that ended as it started leaves behind ---------------------------------------


def test_a_task_that_ended_as_it_started_is_not_kept_by_its_scope() -> None:
    """Eagerly, a coroutine that never suspends has ended when ``start`` returns: the
    scope keeps nothing of it (its task, with its context, is freed as the caller drops
    it, not when the scope ends). A scheduled task is kept until the scope ends."""

    async def body(eager: bool) -> bool:
        async def child() -> None:
            pass

        async with TaskScope(eager=eager) as scope:
            gone = weakref.ref(scope.start(child()))
            freed_at_once = gone() is None
            await asyncio.sleep(0)  # a scheduled one runs now, and is kept
        return freed_at_once

    assert run(body(eager=True)) is EAGER
    assert run(body(eager=False)) is False


def test_a_calls_task_that_ended_as_it_started_is_freed_before_the_turn_ends() -> None:
    """The turn does not keep the task of a call answered as it started either: the call
    holds a done future in its place, which every wait, cancel and budget skips. On 3.11
    the task is scheduled, and kept until its turn ends."""
    reqs = [request("mine", {"q": str(n)}, index=n) for n in range(3)]
    tasks: list[weakref.ref[asyncio.Task[Any]]] = []

    @tool(concurrency_safe=True, side_effects=False)
    async def mine(q: str) -> str:
        """Notes its task without suspending."""
        task = asyncio.current_task()
        assert task is not None
        tasks.append(weakref.ref(task))
        return q

    async def body(budget: float | None) -> tuple[bool, list[ToolResult]]:
        turn = Executor([mine], ExecutionOptions(batch_budget=budget)).turn()
        async with turn:
            for req in reqs:
                turn.ready(ready(req))
            freed = len(tasks) == 3 and all(task() is None for task in tasks)
            await turn.finish(reqs)  # the budget's path waits on the calls' tasks too
        return freed, turn.results()

    for budget in (None, 5.0):
        tasks.clear()
        freed, results = run(body(budget))
        assert freed is EAGER
        assert [(r.status, r.content) for r in results] == [
            (ToolStatus.OK, str(n)) for n in range(3)
        ]
