"""The executor: batches, threads, timeouts, retries, budget, faults, early execution."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import CallerError
from toolwire.messages import ToolCall, ToolStatus
from toolwire.run._threads import WorkerPool
from toolwire.run.execute import ExecutionOptions, Executor, TurnRun
from toolwire.tools import Tool, tool
from toolwire.turn import ToolRequest
from toolwire.wire.events import ToolCallReady, ToolCallStarted

from .helpers import request, run, run_fake_clock

OK, ERROR, TIMEOUT = ToolStatus.OK, ToolStatus.ERROR, ToolStatus.TIMEOUT
CANCELLED, NOT_EXECUTED = ToolStatus.CANCELLED, ToolStatus.NOT_EXECUTED


def ready(req: Any) -> ToolCallReady:
    return ToolCallReady(req.index, ToolCall(req.id, req.name, req.raw_arguments), req)


def make_tools(log: list[str]) -> list[Tool]:
    @tool(concurrency_safe=True, side_effects=False)
    async def read(key: str) -> str:
        """Read."""
        log.append(f"read {key}")
        await asyncio.sleep(0)
        return f"value of {key}"

    @tool
    def write(key: str) -> dict[str, str]:
        """Write (sync, unsafe)."""
        log.append(f"start write {key}")
        log.append(f"end write {key}")
        return {"written": key}

    @tool
    async def fail(message: str) -> str:
        """Always raises."""
        raise RuntimeError(message)

    return [read, write, fail]


# -- order, validation, results --------------------------------------------------------


def test_results_in_call_order_and_invalid_calls_never_run() -> None:
    log: list[str] = []
    executor = Executor(make_tools(log))
    reqs = [
        request("read", {"key": "a"}, index=0),
        request("write", {"key": "b"}, index=1),
        request("write", {"key": 5}, index=2),  # wrong type: never executed
        request("nope", {}, index=3),
        request("fail", {"message": "boom"}, index=4),
        request("read", {"key": "c"}, index=5),
    ]
    results = run(executor.execute(reqs))
    assert [r.call_id for r in results] == [r.id for r in reqs]
    assert [r.status for r in results] == [OK, OK, ERROR, ERROR, ERROR, OK]
    assert results[0].content == "value of a"
    assert results[1].content == '{"written": "b"}'
    assert "do not match the tool's schema" in results[2].content
    assert "no tool named `nope`" in results[3].content
    assert "RuntimeError: boom" in results[4].content
    assert log == ["read a", "start write b", "end write b", "read c"]


def test_side_effects_happen_in_call_order() -> None:
    log: list[str] = []

    @tool(concurrency_safe=True)
    async def read(key: str) -> str:
        """Read."""
        log.append(f"start read {key}")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        log.append(f"end read {key}")
        return key

    @tool
    async def write(key: str) -> str:
        """Write."""
        log.append(f"start write {key}")
        await asyncio.sleep(0)
        log.append(f"end write {key}")
        return key

    reqs = [
        request("read", {"key": "1"}, index=0),
        request("read", {"key": "2"}, index=1),
        request("write", {"key": "3"}, index=2),
        request("read", {"key": "4"}, index=3),
    ]
    run(Executor([read, write]).execute(reqs))
    write_at = log.index("start write 3")
    assert log[write_at + 1] == "end write 3"  # nothing interleaves with the write
    assert set(log[:write_at]) == {"start read 1", "end read 1", "start read 2", "end read 2"}
    assert log[write_at + 2 :] == ["start read 4", "end read 4"]
    # the two reads before the write overlapped: both started before either ended
    assert log[:2] == ["start read 1", "start read 2"]


def test_parallel_batch_runs_concurrently() -> None:
    started = 0
    everyone = asyncio.Event

    async def body() -> list[Any]:
        gate = everyone()

        @tool(concurrency_safe=True, timeout=5)
        async def meet(n: int) -> int:
            """Wait until all four calls are running: a serial executor would time out."""
            nonlocal started
            started += 1
            if started == 4:
                gate.set()
            await gate.wait()
            return n

        reqs = [request("meet", {"n": i}, index=i) for i in range(4)]
        return list(await Executor([meet]).execute(reqs))

    results = run(body())
    assert [r.status for r in results] == [OK] * 4
    assert [r.content for r in results] == ["0", "1", "2", "3"]


def test_sync_tools_run_in_threads_under_the_cap() -> None:
    lock = threading.Lock()
    running = 0
    peak = 0
    threads: set[str] = set()
    release = threading.Event()

    @tool(concurrency_safe=True, timeout=5)
    def work(n: int) -> int:
        """Sync work."""
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            threads.add(threading.current_thread().name)
            if running == 2:
                release.set()
        release.wait(5)
        with lock:
            running -= 1
        return n

    executor = Executor([work], ExecutionOptions(max_threads=2))
    reqs = [request("work", {"n": i}, index=i) for i in range(6)]
    results = run(executor.execute(reqs))
    assert [r.content for r in results] == [str(i) for i in range(6)]
    assert peak == 2
    assert threading.main_thread().name not in threads


def test_sync_tools_can_use_their_own_event_loop() -> None:
    @tool
    def nested(n: int) -> int:
        """A sync tool that runs asyncio itself (it is in a worker thread)."""

        async def inner() -> int:
            await asyncio.sleep(0)
            return n * 2

        return asyncio.run(inner())

    results = run(Executor([nested]).execute([request("nested", {"n": 4})]))
    assert results[0].content == "8"


def test_return_values_that_have_no_text_become_error_results() -> None:
    @tool
    async def odd() -> Any:
        """Returns an object."""
        return object()

    results = run(Executor([odd]).execute([request("odd")]))
    assert results[0].status is ERROR
    assert "cannot turn into text" in results[0].content


def test_concurrency_policy_of_the_input() -> None:
    calls: list[str] = []

    def policy(value: dict[str, Any]) -> bool:
        if value["path"] == "boom":
            raise ValueError("policy bug")
        return bool(value["path"].startswith("/tmp"))

    @tool(concurrency_safe=policy)
    async def touch(path: str) -> str:
        """Touch."""
        calls.append(path)
        return path

    executor = Executor([touch])

    async def body() -> list[bool]:
        turn = executor.turn()
        async with turn:
            turn.bind(
                [
                    request("touch", {"path": p}, index=i)
                    for i, p in enumerate(["/tmp/a", "/etc", "boom"])
                ]
            )
            safe = [c.safe for c in turn._order or []]
            await turn.finish()
        return safe

    assert run(body()) == [True, False, False]
    assert calls == ["/tmp/a", "/etc", "boom"]


# -- timeouts ---------------------------------------------------------------------------


def test_async_timeout() -> None:
    @tool(timeout=0.05)
    async def hang() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "never"

    results = run_fake_clock(
        Executor([hang]).execute([request("hang"), request("hang", index=1, call_id="b")])
    )
    assert [r.status for r in results] == [TIMEOUT, TIMEOUT]
    assert "timed out after 0.05 s" in results[0].content


def test_a_policy_set_after_the_tool_was_made_holds_for_its_calls() -> None:
    # The executor reads a tool's call facts, worked out once per tool: setting a policy
    # attribute later works them out again (a stale fact would skip the timeout here, and
    # start the call with side effects while the turn streams).
    @tool(concurrency_safe=True, side_effects=False)
    async def hang() -> str:
        """Returns an hour later (on the test's clock: at once)."""
        await asyncio.sleep(3600)
        return "late"

    hang.timeout = 0.05
    hang.side_effects = True

    async def body() -> tuple[list[ToolStatus], bool]:
        turn = Executor([hang]).turn()
        async with turn:
            turn.ready(ready(request("hang")))
            started_early = turn._by_index[0].task is not None
            await turn.finish([request("hang")])
        return [r.status for r in turn.results()], started_early

    statuses, started_early = run_fake_clock(body())
    assert statuses == [TIMEOUT]
    assert not started_early  # side effects: it waited for the end of the stream


def test_a_tool_unpickled_without_call_facts_runs_its_calls() -> None:
    # A tool pickled by a toolwire that had no call facts (a Ray worker of a newer one
    # unpickles it): the class's cautious values run its calls, by the general path.
    @tool(concurrency_safe=lambda value: True, timeout=5)
    async def read(key: str) -> str:
        """Read."""
        return f"value of {key}"

    older = Tool.__new__(Tool)
    older.__dict__.update(
        {k: v for k, v in vars(read).items() if k not in {"_harmless", "_safe", "_direct"}}
    )
    reqs = [request("read", {"key": k}, index=n, call_id=k) for n, k in enumerate("ab")]
    results = run(Executor([older]).execute(reqs))
    assert [(r.status, r.content) for r in results] == [(OK, "value of a"), (OK, "value of b")]


def test_stuck_sync_tool_is_abandoned_and_frees_its_slot() -> None:
    release, started = threading.Event(), threading.Event()

    @tool(timeout=0.05, concurrency_safe=True)
    def stuck() -> str:
        """Blocks its thread."""
        started.set()
        release.wait(10)
        return "late"

    @tool(concurrency_safe=True)
    def quick() -> str:
        """Fast."""
        return "quick"

    executor = Executor([stuck, quick], ExecutionOptions(max_threads=1), pool=WorkerPool("test"))
    try:
        results = run_fake_clock(
            executor.execute([request("stuck"), request("quick", index=1, call_id="q")]),
            before_time_passes=[started],
        )
    finally:
        release.set()
    assert [r.status for r in results] == [TIMEOUT, OK]
    assert results[1].content == "quick"


# -- retries ------------------------------------------------------------------------------


def _flaky(failures: int, *, idempotent: bool, retries: int = 3) -> tuple[Tool, list[int]]:
    attempts: list[int] = []

    @tool(idempotent=idempotent, retries=retries)
    async def flaky() -> str:
        """Fails a few times."""
        attempts.append(len(attempts))
        if len(attempts) <= failures:
            raise ConnectionError("try again")
        return "finally"

    return flaky, attempts


def _recording_sleep() -> tuple[Any, list[float]]:
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    return sleep, delays


def test_idempotent_tools_retry_with_exponential_backoff_and_jitter() -> None:
    flaky, attempts = _flaky(2, idempotent=True)
    sleep, delays = _recording_sleep()
    options = ExecutionOptions(backoff_base=0.1, backoff_max=10)
    results = run(Executor([flaky], options, sleep=sleep).execute([request("flaky")]))
    assert results[0].status is OK and results[0].content == "finally"
    assert len(attempts) == 3
    assert len(delays) == 2
    assert 0.05 <= delays[0] <= 0.1
    assert 0.1 <= delays[1] <= 0.2


def test_backoff_is_capped_and_jittered() -> None:
    executor = Executor([], ExecutionOptions(backoff_base=1, backoff_max=3))
    for attempt in range(8):
        delay = executor.backoff(attempt)
        ceiling = min(3, 2**attempt)
        assert ceiling / 2 <= delay <= ceiling
    assert len({executor.backoff(5) for _ in range(20)}) > 1


def test_retries_give_up_with_the_last_error() -> None:
    flaky, attempts = _flaky(10, idempotent=True, retries=2)
    sleep, delays = _recording_sleep()
    results = run(Executor([flaky], sleep=sleep).execute([request("flaky")]))
    assert results[0].status is ERROR and "ConnectionError: try again" in results[0].content
    assert len(attempts) == 3 and len(delays) == 2


def test_non_idempotent_tools_are_never_retried() -> None:
    flaky, attempts = _flaky(1, idempotent=False)
    sleep, delays = _recording_sleep()
    results = run(Executor([flaky], sleep=sleep).execute([request("flaky")]))
    assert results[0].status is ERROR
    assert attempts == [0] and delays == []


def test_retry_on_decides_what_is_retryable() -> None:
    flaky, attempts = _flaky(1, idempotent=True)
    sleep, _ = _recording_sleep()
    options = ExecutionOptions(retry_on=lambda exc: not isinstance(exc, ConnectionError))
    results = run(Executor([flaky], options, sleep=sleep).execute([request("flaky")]))
    assert results[0].status is ERROR and len(attempts) == 1


def test_timeouts_of_idempotent_tools_are_retried() -> None:
    attempts: list[int] = []

    @tool(timeout=0.05, idempotent=True, retries=1)
    async def slow_once() -> str:
        """Hangs the first time."""
        attempts.append(1)
        if len(attempts) == 1:
            await asyncio.Event().wait()
        return "second time"

    sleep, _ = _recording_sleep()
    results = run_fake_clock(Executor([slow_once], sleep=sleep).execute([request("slow_once")]))
    assert results[0].status is OK and results[0].content == "second time"


# -- batch budget ----------------------------------------------------------------------------


def test_batch_budget_degrades_to_serial() -> None:
    attempts: list[str] = []

    @tool(concurrency_safe=True, idempotent=True)
    async def contended(key: str) -> str:
        """Hangs while run in parallel; fine alone."""
        attempts.append(key)
        if key == "slow" and attempts.count(key) == 1:
            await asyncio.Event().wait()
        return key

    @tool(concurrency_safe=True)  # side effects, not idempotent: may not run twice
    async def once(key: str) -> str:
        """Hangs the first time."""
        attempts.append(key)
        await asyncio.Event().wait()
        return key

    executor = Executor([contended, once], ExecutionOptions(batch_budget=0.05))
    reqs = [
        request("contended", {"key": "fast"}, index=0),
        request("contended", {"key": "slow"}, index=1),
        request("once", {"key": "once"}, index=2),
    ]
    results = run_fake_clock(executor.execute(reqs))
    assert [r.status for r in results] == [OK, OK, TIMEOUT]
    assert results[1].content == "slow"
    assert "time budget (0.05 s)" in results[2].content
    assert attempts.count("slow") == 2 and attempts.count("once") == 1


def test_batch_budget_reruns_calls_that_never_started() -> None:
    release, started = threading.Event(), threading.Event()

    @tool(concurrency_safe=True)
    def hold() -> str:
        """Holds the only thread past the budget."""
        started.set()
        release.wait(10)
        return "held"

    @tool(concurrency_safe=True)
    def queued() -> str:
        """Waits behind the thread cap."""
        return "ran"

    options = ExecutionOptions(max_threads=1, batch_budget=0.05)
    executor = Executor([hold, queued], options, pool=WorkerPool("test-budget"))
    try:
        results = run_fake_clock(
            executor.execute([request("hold"), request("queued", index=1, call_id="q")]),
            before_time_passes=[started],
        )
    finally:
        release.set()
    assert [r.status for r in results] == [TIMEOUT, OK]
    assert results[1].content == "ran"


# -- faults ------------------------------------------------------------------------------------


def test_keyboard_interrupt_is_deferred_until_every_call_has_a_result() -> None:
    @tool(concurrency_safe=True)
    async def hang() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "never"

    @tool(concurrency_safe=True)
    async def interrupt() -> str:
        """Ctrl-C."""
        await asyncio.sleep(0)
        raise KeyboardInterrupt

    @tool
    async def later() -> str:
        """Would run after the batch."""
        return "later"

    executor = Executor([hang, interrupt, later])
    turn = executor.turn()
    reqs = [
        request("hang", index=0),
        request("interrupt", index=1, call_id="i"),
        request("later", index=2, call_id="l"),
    ]

    async def body() -> None:
        async with turn:
            await turn.finish(reqs)

    with pytest.raises(KeyboardInterrupt):
        run(body())
    results = turn.results()
    assert [r.status for r in results] == [CANCELLED, CANCELLED, NOT_EXECUTED]
    assert "KeyboardInterrupt" in results[1].content


def test_sync_tool_raising_keyboard_interrupt() -> None:
    @tool
    def interrupt() -> str:
        """Ctrl-C in a thread."""
        raise KeyboardInterrupt

    turn = Executor([interrupt]).turn()

    async def body() -> None:
        async with turn:
            await turn.finish([request("interrupt")])

    with pytest.raises(KeyboardInterrupt):
        run(body())
    assert [r.status for r in turn.results()] == [CANCELLED]


def test_cancelling_the_run_answers_every_call() -> None:
    started = asyncio.Event

    async def body() -> list[ToolStatus]:
        began = started()

        @tool(concurrency_safe=True)
        async def hang() -> str:
            """Never returns."""
            began.set()
            await asyncio.Event().wait()
            return "never"

        @tool
        async def after() -> str:
            """Never reached."""
            return "after"

        turn = Executor([hang, after]).turn()

        async def execute() -> None:
            async with turn:
                await turn.finish(
                    [
                        request("hang", index=0),
                        request("hang", index=1, call_id="h"),
                        request("after", index=2, call_id="a"),
                    ]
                )

        task = asyncio.create_task(execute())
        await began.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return [r.status for r in turn.results()]

    assert run(body()) == [CANCELLED, CANCELLED, NOT_EXECUTED]


def test_results_and_finish_misuse() -> None:
    turn = Executor([]).turn()
    with pytest.raises(CallerError):
        turn.results()

    async def twice() -> None:
        async with turn:
            await turn.finish([])
            await turn.finish([])

    with pytest.raises(CallerError, match="twice"):
        run(twice())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_threads": 0},
        {"batch_budget": 0},
        {"backoff_base": -1},
        {"retry_on": 3},
    ],
)
def test_bad_options(kwargs: dict[str, Any]) -> None:
    with pytest.raises(CallerError):
        ExecutionOptions(**kwargs)


def test_usage_limit_and_skip_answer_every_call_not_executed() -> None:
    log: list[str] = []
    executor = Executor(make_tools(log))
    reqs = [
        request("read", {"key": "a"}, index=0),
        request("write", {"key": "b"}, index=1, call_id="w"),
    ]

    async def body(**kwargs: Any) -> TurnRun:
        turn = executor.turn(allowed=kwargs.pop("allowed", None))
        async with turn:
            await turn.finish(reqs, **kwargs)
        return turn

    limited = run(body(allowed=1))
    assert [r.status for r in limited.results()] == [NOT_EXECUTED, NOT_EXECUTED]
    assert limited.skipped_for_limit == 2 and "limit" in limited.results()[0].content
    skipped = run(body(skip_reason="no tools now"))
    assert [r.status for r in skipped.results()] == [NOT_EXECUTED, NOT_EXECUTED]
    assert "no tools now" in skipped.results()[1].content
    assert log == []


# -- early execution ------------------------------------------------------------------------------


def _early_tools(log: list[str]) -> list[Tool]:
    @tool(concurrency_safe=True, side_effects=False)
    async def read(key: str) -> str:
        """Read."""
        log.append(f"read {key}")
        return key

    @tool
    async def write(key: str) -> str:
        """Write."""
        log.append(f"write {key}")
        return key

    return [read, write]


def test_a_call_task_is_named_by_its_call_id() -> None:
    """A call's task carries its call's id as its name (asyncio's ``Task-N`` otherwise),
    whether it starts early or with its batch."""
    names: list[str] = []

    @tool(concurrency_safe=True, side_effects=False)
    async def who() -> str:
        """Names its task."""
        task = asyncio.current_task()
        assert task is not None
        names.append(task.get_name())
        return "x"

    reqs = [request("who", index=0, call_id="a"), request("who", index=1, call_id="b")]

    async def early() -> None:
        turn = Executor([who]).turn()
        async with turn:
            for req in reqs:
                turn.ready(ready(req))
            await turn.finish(reqs)

    run(Executor([who]).execute(reqs))
    run(early())
    assert names == ["a", "b", "a", "b"]


def test_early_execution_gate() -> None:
    log: list[str] = []
    executor = Executor(_early_tools(log))
    reqs = [
        request("read", {"key": "a"}, index=0),
        request("read", {}, index=1),  # invalid: never runs, does not block
        request("read", {"key": "b"}, index=2),
        request("write", {"key": "c"}, index=3),  # unsafe: closes the gate
        request("read", {"key": "d"}, index=4),
    ]

    async def body() -> list[list[str]]:
        seen: list[list[str]] = []
        turn = executor.turn()
        async with turn:
            for req in reqs:
                turn.started(ToolCallStarted(req.index, req.id, req.name))
                turn.ready(ready(req))
                await asyncio.sleep(0)
                await asyncio.sleep(0)
                seen.append(list(log))
            await turn.finish(reqs)
        assert [r.status for r in turn.results()] == [OK, ERROR, OK, OK, OK]
        return seen

    seen = run(body())
    assert seen[0] == ["read a"]  # started while the "stream" went on
    assert seen[2] == ["read a", "read b"]
    assert seen[4] == ["read a", "read b"]  # the write and the read after it waited
    assert log == ["read a", "read b", "write c", "read d"]


def test_early_gate_waits_for_earlier_calls_still_streaming() -> None:
    log: list[str] = []
    executor = Executor(_early_tools(log))
    first, second = request("read", {"key": "a"}, index=0), request("read", {"key": "b"}, index=1)

    async def body() -> list[str]:
        turn = executor.turn()
        async with turn:
            turn.started(ToolCallStarted(0, first.id, "read"))
            turn.ready(ready(second))  # index 1 closed before index 0
            await asyncio.sleep(0)
            before = list(log)
            turn.ready(ready(first))
            await turn.finish([first, second])
        return before

    assert run(body()) == []
    assert sorted(log) == ["read a", "read b"]


def test_early_execution_off() -> None:
    log: list[str] = []
    executor = Executor(_early_tools(log))
    req = request("read", {"key": "a"})

    async def body() -> list[str]:
        turn = executor.turn(early=False)
        async with turn:
            turn.ready(ready(req))
            await asyncio.sleep(0)
            before = list(log)
            await turn.finish([req])
        return before

    assert run(body()) == []
    assert log == ["read a"]


def test_started_call_whose_final_request_differs_is_cancelled_and_rerun() -> None:
    async def body() -> tuple[TurnRun, list[str]]:
        log: list[str] = []
        release = asyncio.Event()

        @tool(concurrency_safe=True, side_effects=False)
        async def fetch(url: str) -> str:
            """Fetch."""
            log.append(f"start {url}")
            if url == "draft":
                await release.wait()
            return url

        turn = Executor([fetch]).turn()
        early = request("fetch", {"url": "draft"})
        final = request("fetch", {"url": "final"})
        async with turn:
            turn.ready(ready(early))
            await asyncio.sleep(0)
            await turn.finish([final])
        return turn, log

    turn, log = run(body())
    assert log == ["start draft", "start final"]
    [result] = turn.results()
    assert result.status is OK and result.content.startswith("final")
    assert "an earlier reading of this call, `fetch`, had already started" in result.content
    [discarded] = turn.discarded
    assert discarded.call_id == "call_0" and "differ" in discarded.reason and discarded.ran


async def _stream_then_finish(
    executor: Executor, streamed: list[ToolRequest], final: list[ToolRequest]
) -> TurnRun:
    """A turn whose ``streamed`` calls close while it streams (each may start early),
    then finished with the ``final`` requests."""
    turn = executor.turn()
    async with turn:
        for req in streamed:
            turn.ready(ready(req))
        await asyncio.sleep(0)
        await turn.finish(final)
    return turn


def test_a_final_turn_of_equal_copies_keeps_the_calls_started_early() -> None:
    """Final requests equal to the announced ones but not the very objects (a provider
    that rebuilt them at the end) keep the calls started while streaming: each runs once,
    nothing is discarded."""
    log: list[str] = []
    executor = Executor(_early_tools(log))
    reqs = [request("read", {"key": key}, index=i) for i, key in enumerate("ab")]
    copies = [request("read", {"key": key}, index=i) for i, key in enumerate("ab")]
    assert copies == reqs and copies[0] is not reqs[0]

    turn = run(_stream_then_finish(executor, reqs, copies))
    assert log == ["read a", "read b"] and not turn.discarded
    assert [(r.status, r.content) for r in turn.results()] == [(OK, "a"), (OK, "b")]


def test_a_final_turn_as_long_as_its_early_starts_runs_the_one_it_replaced() -> None:
    """Two calls start while streaming; the final turn keeps the second and replaces the
    first (other arguments): as many final calls as early starts, yet one final call
    has not started, and it runs. ``answered_requests`` names the final requests."""
    log: list[str] = []
    executor = Executor(_early_tools(log))
    streamed = [request("read", {"key": key}, index=i) for i, key in enumerate("ab")]
    final = [request("read", {"key": "x"}, index=0), streamed[1]]

    turn = run(_stream_then_finish(executor, streamed, final))
    assert sorted(log) == ["read a", "read b", "read x"]
    assert [(r.status, r.content.split(" ")[0]) for r in turn.results()] == [
        (OK, "x"),
        (OK, "b"),
    ]
    assert turn.answered_requests() == final
    assert [d.call_id for d in turn.discarded] == ["call_0"]


def test_answered_requests_are_the_answered_calls_requests_in_call_order() -> None:
    """Read before the results and after them: the requests of the calls that have a
    result, in call order, in a list of the caller's own."""
    log: list[str] = []
    executor = Executor(_early_tools(log))
    # Calls with side effects: none starts before the turn is final (an eager start
    # would answer a read-only one as it closes), so none has a result before finish.
    reqs = [request("write", {"key": key}, index=i) for i, key in enumerate("abc")]

    async def body() -> tuple[TurnRun, list[Any]]:
        turn = executor.turn()
        async with turn:
            for req in reqs:
                turn.ready(ready(req))
            turn.bind(reqs)
            before = turn.answered_requests()
            await turn.finish()
        turn.results()
        return turn, before

    turn, before = run(body())
    after = turn.answered_requests()
    assert before == [] and after == reqs
    after.clear()  # the caller's own list: the next one is whole
    assert turn.answered_requests() == reqs
    assert log == ["write a", "write b", "write c"]


def test_failed_turn_cancels_started_calls_and_keeps_the_error() -> None:
    async def body() -> TurnRun:
        @tool(concurrency_safe=True, side_effects=False)
        async def hang() -> str:
            """Never returns."""
            await asyncio.Event().wait()
            return "never"

        turn = Executor([hang]).turn()
        with pytest.raises(ValueError, match="stream broke"):
            async with turn:
                turn.ready(ready(request("hang")))
                await asyncio.sleep(0)
                raise ValueError("stream broke")
        return turn

    turn = run(body())
    assert [d.name for d in turn.discarded] == ["hang"]
    assert "stream broke" in turn.discarded[0].reason
    assert not turn.bound


# -- exactly one result per call, whatever happens ---------------------------------------------------

BEHAVIOURS = [
    "ok",
    "ok_sync",
    "raise",
    "hang",
    "stuck_sync",
    "invalid",
    "unknown",
    "interrupt",
    "slow",
]


async def _ok(n: int) -> int:
    return n


async def _fail(n: int) -> int:
    raise RuntimeError(f"failed {n}")


async def _hang(n: int) -> int:
    await asyncio.Event().wait()
    return n


async def _interrupt(n: int) -> int:
    raise KeyboardInterrupt


def _fault_tools(release: threading.Event) -> list[Tool]:
    def make(name: str, fn: Any, **policy: Any) -> list[Tool]:
        return [
            Tool.from_function(fn, name=f"{name}_safe", concurrency_safe=True, **policy),
            Tool.from_function(fn, name=f"{name}_unsafe", concurrency_safe=False, **policy),
        ]

    def ok_sync(n: int) -> int:
        return n

    def stuck_sync(n: int) -> int:
        release.wait(10)
        return n

    async def slow(n: int) -> int:
        for _ in range(3):
            await asyncio.sleep(0)
        return n

    return [
        *make("ok", _ok),
        *make("ok_sync", ok_sync),
        *make("raise", _fail),
        *make("hang", _hang, timeout=0.01),
        *make("stuck_sync", stuck_sync, timeout=0.01),
        *make("interrupt", _interrupt),
        *make("slow", slow),
    ]


_RELEASE = threading.Event()
_FAULT_TOOLS = _fault_tools(_RELEASE)


def _fault_request(position: int, behaviour: str, safe: bool) -> Any:
    suffix = "_safe" if safe else "_unsafe"
    if behaviour == "invalid":
        return request("ok" + suffix, {"n": "not a number"}, index=position, call_id=f"c{position}")
    if behaviour == "unknown":
        return request("missing", {"n": 1}, index=position, call_id=f"c{position}")
    return request(behaviour + suffix, {"n": position}, index=position, call_id=f"c{position}")


@settings(max_examples=200, deadline=None)
@given(
    calls=st.lists(st.tuples(st.sampled_from(BEHAVIOURS), st.booleans()), max_size=8),
    early=st.booleans(),
    cancel_after=st.none() | st.integers(min_value=0, max_value=12),
)
def test_exactly_one_result_per_call_in_order(
    calls: list[tuple[str, bool]], early: bool, cancel_after: int | None
) -> None:
    reqs = [_fault_request(i, behaviour, safe) for i, (behaviour, safe) in enumerate(calls)]
    # A fresh executor per example: an abandoned stuck call of an earlier example must
    # not hold this one's unsafe calls back (the fake clock makes their grace instant).
    turn = Executor(_FAULT_TOOLS, ExecutionOptions(max_threads=4)).turn(early=early)

    async def execute() -> None:
        async with turn:
            for req in reqs:
                turn.ready(ready(req))
                await asyncio.sleep(0)
            await turn.finish(reqs)

    started: list[asyncio.Task[None]] = []

    async def body() -> None:
        task = asyncio.create_task(execute())
        started.append(task)
        if cancel_after is None:
            await task
            return
        for _ in range(cancel_after):
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    interrupted = False
    try:
        run_fake_clock(body())
    except KeyboardInterrupt:
        interrupted = True
        # The task that raised it holds it too: retrieved here, or its collection logs
        # "Task exception was never retrieved" with a traceback in whichever later test
        # the collector runs — inside an ``ast.parse`` there, CPython 3.11 (whose
        # traceback carets parse source too) raises a spurious SystemError (gh-106905).
        for task in started:
            if task.done() and not task.cancelled():
                task.exception()
    results = turn.results() if turn.bound else []
    if turn.bound:
        assert [r.call_id for r in results] == [r.id for r in reqs]
        assert len({id(r) for r in results}) == len(reqs)
        assert all(r.name == q.name for r, q in zip(results, reqs))
    for (behaviour, _), result in zip(calls, results):
        if behaviour in ("invalid", "unknown"):
            assert result.status is ERROR  # never executed, whatever else happened
        elif behaviour in ("hang", "stuck_sync") and result.status not in (CANCELLED, NOT_EXECUTED):
            assert result.status is TIMEOUT
        elif behaviour == "raise" and result.status not in (CANCELLED, NOT_EXECUTED):
            assert result.status is ERROR
        elif behaviour in ("ok", "ok_sync", "slow") and result.status not in (
            CANCELLED,
            NOT_EXECUTED,
        ):
            assert result.status is OK
    if "interrupt" in [b for b, _ in calls] and cancel_after is None:
        held_back = [r for r in results if "still running in its thread" in r.content]
        assert (
            interrupted
            or not turn.bound
            or held_back
            or any(r.status is CANCELLED for r in results)
        )
    if not interrupted and cancel_after is None:
        assert turn.bound


def _harmless_tools() -> list[Tool]:
    """Tools that start early (no side effects), safe and unsafe, of each behaviour."""

    async def slow(n: int) -> int:
        for _ in range(n % 3):
            await asyncio.sleep(0)
        return n

    behaviours = {"ok": _ok, "raise": _fail, "hang": _hang, "interrupt": _interrupt, "slow": slow}
    return [
        Tool.from_function(
            fn,
            name=f"{name}_{'safe' if safe else 'unsafe'}",
            concurrency_safe=safe,
            side_effects=False,
            timeout=0.01 if name == "hang" else None,
        )
        for name, fn in behaviours.items()
        for safe in (True, False)
    ]


_HARMLESS_TOOLS = _harmless_tools()


def _finished_turn(
    calls: list[tuple[str, bool]], budget: float | None
) -> tuple[list[tuple[str, ToolStatus, str]], int, bool]:
    """Stream ``calls`` (each started early when it may), finish the turn, and tell its
    results, how many calls ran and whether a tool's ``KeyboardInterrupt`` came out."""
    reqs = [_fault_request(i, behaviour, safe) for i, (behaviour, safe) in enumerate(calls)]
    turn = Executor(_HARMLESS_TOOLS, ExecutionOptions(batch_budget=budget)).turn(early=True)

    async def execute() -> None:
        async with turn:
            for req in reqs:
                turn.ready(ready(req))
                await asyncio.sleep(0)
            await turn.finish(reqs)

    interrupted = False
    try:
        run_fake_clock(execute())
    except KeyboardInterrupt:
        interrupted = True
    results = [(r.call_id, r.status, r.content) for r in turn.results()]
    return results, turn.executed, interrupted


@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(["ok", "raise", "hang", "interrupt", "slow", "invalid", "unknown"]),
            st.booleans(),
        ),
        max_size=6,
    )
)
def test_a_turn_that_started_early_ends_as_its_planned_batches_would(
    calls: list[tuple[str, bool]],
) -> None:
    """Without a batch budget, a turn whose calls all started while it streamed is one
    wait for them all (``TurnRun._all_started``); with one, its batches are planned and
    each waited for under the budget (never reached here). The same results, the same
    calls run, the same interrupt."""
    assert _finished_turn(calls, None) == _finished_turn(calls, 1e6)


# -- the executor's promises under hostile tools -------------------------------------------


def test_a_sync_tool_raising_stop_iteration_gets_an_error_result() -> None:
    """``future.set_exception(StopIteration)`` fails inside the loop's callback: the run
    used to wait forever (no timeout here, so nothing else would end it)."""

    @tool
    def exhausted() -> str:
        """Calls next() on an empty iterator."""
        return str(next(iter([])))

    results = run(Executor([exhausted], pool=WorkerPool("stop")).execute([request("exhausted")]))
    assert [r.status for r in results] == [ERROR]
    assert "StopIteration" in results[0].content


def test_an_overrunning_unsafe_sync_call_never_overlaps_the_next_one() -> None:
    release, started = threading.Event(), threading.Event()
    running: list[str] = []
    overlapped: list[str] = []

    @tool(timeout=1)
    def slow_write() -> str:
        """Blocks its thread until released."""
        running.append("slow")
        started.set()
        release.wait(30)
        running.remove("slow")
        return "late"

    @tool
    def write() -> str:
        """Another unsafe call."""
        if running:
            overlapped.append("write")
        return "written"

    executor = Executor(
        [slow_write, write], ExecutionOptions(overrun_grace=2), pool=WorkerPool("overlap")
    )
    try:
        results = run_fake_clock(
            executor.execute([request("slow_write"), request("write", index=1, call_id="w")]),
            before_time_passes=[started],
        )
    finally:
        release.set()
    assert [r.status for r in results] == [TIMEOUT, NOT_EXECUTED]
    assert "still running in its thread after a 2 s grace period" in results[1].content
    assert overlapped == []


def test_the_next_unsafe_call_runs_once_the_overrunning_one_ends() -> None:
    release, started = threading.Event(), threading.Event()
    order: list[str] = []

    @tool(timeout=1)
    def slow_write() -> str:
        """Blocks its thread until released."""
        started.set()
        release.wait(30)
        order.append("slow ended")
        return "late"

    @tool
    def write() -> str:
        """Another unsafe call."""
        order.append("write")
        return "written"

    executor = Executor([slow_write, write], pool=WorkerPool("overlap2"))

    async def body() -> list[Any]:
        first = await executor.execute([request("slow_write")])  # times out, abandoned
        release.set()  # its thread ends now; the next unsafe call waits for that
        for thread in threading.enumerate():  # its end is handed to the loop before exit
            if thread.name.startswith("overlap2"):
                thread.join(10)
        return first + await executor.execute([request("write", call_id="w")])

    results = run_fake_clock(body(), before_time_passes=[started])
    assert [r.status for r in results] == [TIMEOUT, OK]
    assert order == ["slow ended", "write"]


def test_an_async_tool_that_swallows_its_cancellation_is_never_reported_ok() -> None:
    @tool(timeout=0.3)
    async def stubborn() -> str:
        """Ignores the cancellation at its deadline and returns later."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(2)
        return "done anyway"

    results = run_fake_clock(Executor([stubborn]).execute([request("stubborn")]))
    assert [r.status for r in results] == [TIMEOUT]


def test_a_call_with_side_effects_never_starts_before_the_turn_is_final() -> None:
    """Arguments sent twice (``{"x": 1}{"x": 1}``, a known server bug) looked complete
    after the first object: ``send`` ran early, then the final turn's arguments were
    invalid and the history said it never ran."""
    sent: list[Any] = []

    @tool(concurrency_safe=True)  # side_effects defaults to True
    async def send(x: int) -> str:
        """Sends."""
        sent.append(x)
        return "sent"

    async def body() -> TurnRun:
        turn = Executor([send]).turn()
        async with turn:
            turn.ready(ready(request("send", {"x": 1})))
            await asyncio.sleep(0)
            assert sent == []  # not started while the stream may still change it
            await turn.finish([request("send", '{"x": 1}{"x": 1}')])
        return turn

    turn = run(body())
    assert sent == []
    [result] = turn.results()
    assert result.status is ERROR and "earlier reading" not in result.content
    assert turn.discarded == []


def test_a_harmless_call_that_ran_and_was_replaced_is_recorded_truthfully() -> None:
    """A name fragment after the arguments closed turned ``get`` into ``get_weather``:
    ``get`` (read-only) ran; the history and ``discarded`` say so."""
    log: list[str] = []

    @tool(concurrency_safe=True, side_effects=False)
    async def get() -> str:
        """Reads."""
        log.append("get")
        return "got"

    @tool(concurrency_safe=True, side_effects=False)
    async def get_weather() -> str:
        """Reads the weather."""
        log.append("get_weather")
        return "sunny"

    async def body() -> TurnRun:
        turn = Executor([get, get_weather]).turn()
        async with turn:
            turn.ready(ready(request("get")))
            for _ in range(3):
                await asyncio.sleep(0)
            await turn.finish([request("get_weather")])
        return turn

    turn = run(body())
    assert log == ["get", "get_weather"]
    [result] = turn.results()
    assert result.content.startswith("sunny") and "`get`, had already started" in result.content
    assert [(d.name, d.ran) for d in turn.discarded] == [("get", True)]


def test_big_arguments_are_validated_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.run.execute import OFF_LOOP_ARGUMENTS

    @tool(side_effects=False)  # so that repaired arguments may run
    def store(text: str) -> str:
        """Store a text."""
        return f"stored {len(text)}"

    executor = Executor([store])
    toolset = executor.toolset
    validate = toolset.validate
    loop_served: list[bool] = []

    def validate_and_watch_the_loop(req: Any) -> Any:
        # While this runs, the loop must serve a callback: it cannot if this is on it.
        served = threading.Event()
        loop.call_soon_threadsafe(served.set)
        loop_served.append(served.wait(30))
        return validate(req)

    # Malformed (a trailing comma): repair recovers it, as on the loop.
    raw = '{"text": "' + "x" * (OFF_LOOP_ARGUMENTS + 1) + '",}'
    big = request("store", raw)
    small = request("store", '{"text": "y",}', index=1)

    async def main() -> list[Any]:
        nonlocal loop
        loop = asyncio.get_running_loop()
        monkeypatch.setattr(toolset, "validate", validate_and_watch_the_loop)
        turn = executor.turn()
        async with turn:
            await turn.ready_off_loop(ready(big))
            assert loop_served == [True]
            monkeypatch.setattr(toolset, "validate", validate)  # small: on the loop, as before
            await turn.ready_off_loop(ready(small))
            await turn.finish([big, small])
        return turn.results()

    loop: asyncio.AbstractEventLoop | None = None
    results = run(main())
    assert [(r.status, r.content) for r in results] == [
        (OK, f"stored {OFF_LOOP_ARGUMENTS + 1}"),
        (OK, "stored 1"),
    ]
    assert executor.toolset.validate(big) == validate(big)  # the same validation either way

    async def execute() -> list[Any]:  # a finished turn (no streaming): the same
        nonlocal loop
        loop = asyncio.get_running_loop()
        monkeypatch.setattr(toolset, "validate", validate_and_watch_the_loop)
        return await executor.execute([big])

    [result] = run(execute())
    assert loop_served == [True, True] and result.content == f"stored {OFF_LOOP_ARGUMENTS + 1}"
