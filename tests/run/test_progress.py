"""ToolContext and generator tools in the executor and the agent loop.

A tool with a parameter annotated ``ToolContext`` gets the run id, the call id, an
idempotency key, the agent's ``deps`` and ``progress``; a generator tool reports each
yielded value but the last as a ``ToolProgress`` (once it yields again), and the last
is its result. Timeouts run on a fake clock; threads synchronise on events.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import Agent, ToolContext, ToolProgress, tool
from toolwire.messages import ToolCall, ToolResult, ToolStatus
from toolwire.run import ExecutionOptions, Executor, RunResult, ToolResultReady, render_content
from toolwire.run._threads import WorkerPool
from toolwire.run.progress import ToolScope
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import idempotency_key
from toolwire.wire.events import ToolCallReady, ToolCallStarted

from .helpers import request, run, run_fake_clock

OK, ERROR, TIMEOUT = ToolStatus.OK, ToolStatus.ERROR, ToolStatus.TIMEOUT
CANCELLED = ToolStatus.CANCELLED


def stream_run(agent: Agent, prompt: str = "go") -> tuple[list[Any], RunResult]:
    """Every event of a streamed run, and its result."""

    async def main() -> tuple[list[Any], RunResult]:
        events: list[Any] = []
        async with agent.run_stream(prompt) as stream:
            async for event in stream:
                events.append(event)
        return events, stream.result

    result: tuple[list[Any], RunResult] = asyncio.run(main())
    return result


def results(messages: list[Any]) -> list[ToolResult]:
    return [m for m in messages if isinstance(m, ToolResult)]


def progress_and_results(events: list[Any]) -> list[tuple[str, str, Any]]:
    """``("progress" | "result", call_id, value or content)`` in stream order."""
    out: list[tuple[str, str, Any]] = []
    for event in events:
        if isinstance(event, ToolProgress):
            out.append(("progress", event.call_id, event.value))
        elif isinstance(event, ToolResultReady):
            out.append(("result", event.result.call_id, event.result.content))
    return out


# -- ToolContext ----------------------------------------------------------------------------


@tool
def charge(amount: int, ctx: ToolContext) -> dict[str, Any]:
    """Charge a card (sync: runs in a worker thread)."""
    ctx.progress(f"charging {amount}")
    return {"key": ctx.idempotency_key, "run": ctx.run_id, "call": ctx.call_id, "deps": ctx.deps}


def test_the_context_carries_the_run_the_call_its_key_and_the_deps() -> None:
    model = ScriptedModel([tool_call_turn(("charge", {"amount": 5})), text_turn("done")])
    events, result = stream_run(Agent(model, [charge], deps={"bank": "test"}))
    [answer] = results(result.messages)
    assert answer.status is OK
    seen = json.loads(answer.content)
    assert seen == {
        "key": idempotency_key(result.run_id, 1, 0),
        "run": result.run_id,
        "call": answer.call_id,
        "deps": {"bank": "test"},
    }
    # ctx.progress from a worker thread reaches the stream, before the call's result.
    assert progress_and_results(events)[0] == ("progress", answer.call_id, "charging 5")
    assert [kind for kind, _, _ in progress_and_results(events)] == ["progress", "result"]


@tool
def plain_add(x: int) -> int:
    """A plain tool (no context)."""
    return x + 1


def test_a_context_tool_added_after_plain_runs_gets_its_runs_scope() -> None:
    # A round of a run whose tools are all plain makes no ToolScope; a tool that takes a
    # ToolContext, added to the agent's tools between runs, still reads its own run's
    # id, round and deps (not a scope of a run of its own).
    model = ScriptedModel(
        [
            tool_call_turn(("plain_add", {"x": 1})),
            text_turn("one"),
            tool_call_turn(("plain_add", {"x": 2})),
            text_turn("two"),
            tool_call_turn(("plain_add", {"x": 3}), ("charge", {"amount": 7})),
            text_turn("three"),
        ]
    )
    agent = Agent(model, [plain_add], deps="d")
    for _ in range(2):
        asyncio.run(agent.run("go"))
    agent.executor.toolset.add(charge)
    result = asyncio.run(agent.run("go"))
    added, charged = results(result.messages)
    assert added.content == "4"
    assert json.loads(charged.content) == {
        "key": idempotency_key(result.run_id, 1, 1),
        "run": result.run_id,
        "call": charged.call_id,
        "deps": "d",
    }


def test_keys_differ_for_every_other_call_even_when_the_server_repeats_call_ids() -> None:
    # Some servers number calls per turn: "call_0" in every round.
    turns = [
        tool_call_turn(("charge", {"amount": 1}, "call_0"), ("charge", {"amount": 1}, "call_1")),
        tool_call_turn(("charge", {"amount": 1}, "call_0")),
        text_turn("done"),
    ]
    _, result = stream_run(Agent(ScriptedModel(turns), [charge]))
    keys = [json.loads(r.content)["key"] for r in results(result.messages)]
    assert len(set(keys)) == 3
    assert keys == [
        idempotency_key(result.run_id, 1, 0),
        idempotency_key(result.run_id, 1, 1),
        idempotency_key(result.run_id, 2, 0),
    ]


def test_a_retried_call_keeps_its_key() -> None:
    keys: list[str] = []

    @tool(idempotent=True, retries=2)
    async def pay(ctx: ToolContext) -> str:
        """Fails twice, then works."""
        keys.append(ctx.idempotency_key)
        if len(keys) < 3:
            raise ConnectionError("the bank hung up")
        return "paid"

    executor = Executor([pay], ExecutionOptions(backoff_base=0.0))
    [result] = run(executor.execute([request("pay")]))
    assert result.status is OK and len(keys) == 3 and len(set(keys)) == 1


def test_a_plain_tool_takes_the_common_path_and_a_context_tool_does_not() -> None:
    @tool
    def plain(x: int) -> int:
        """Plain."""
        return x

    assert plain.plain and plain.context_param is None and plain.generator is None
    assert not charge.plain and charge.context_param == "ctx"


def test_progress_after_the_result_is_dropped() -> None:
    """A sync call abandoned at its timeout keeps running in its thread: its progress
    then is not news (the call has its one result)."""
    started, release, reported = threading.Event(), threading.Event(), threading.Event()

    @tool(timeout=0.05)
    def slow(ctx: ToolContext) -> str:
        """Reports after its timeout."""
        started.set()
        release.wait(10)
        ctx.progress("too late")
        reported.set()
        return "late"

    seen: list[Any] = []
    scope = ToolScope("run-1", 1, emit=seen.append)

    async def main() -> list[ToolResult]:
        turn = Executor([slow], pool=WorkerPool("test-progress")).turn(early=False, scope=scope)
        async with turn:
            await turn.finish([request("slow")])
        release.set()
        while not reported.is_set():  # no helper thread: the fake clock would close the
            await asyncio.sleep(0)  # loop's default executor before it joined (3.12+)
        await asyncio.sleep(0)  # the thread's report, queued on this loop, runs now
        return turn.results()

    try:
        [result] = run_fake_clock(main(), before_time_passes=[started])
    finally:
        release.set()
    assert result.status is TIMEOUT
    assert seen == []


# -- generator tools -----------------------------------------------------------------------------


@tool
def steps(n: int) -> Iterator[str]:
    """Counts to n (a sync generator)."""
    for i in range(1, n + 1):
        yield f"step {i}"


@tool
def with_return(n: int) -> Iterator[int]:
    """Yields progress, returns the result."""
    yield from range(n)
    return "finished"  # type: ignore[misc]


@tool
async def asteps(n: int) -> AsyncIterator[dict[str, int]]:
    """Counts to n (an async generator)."""
    for i in range(1, n + 1):
        await asyncio.sleep(0)
        yield {"done": i}


def test_each_yielded_value_but_the_last_is_progress_and_the_last_is_the_result() -> None:
    model = ScriptedModel(
        [tool_call_turn(("steps", {"n": 3}), ("asteps", {"n": 2})), text_turn("done")]
    )
    events, result = stream_run(Agent(model, [steps, asteps]))
    first, second = results(result.messages)
    assert (first.status, first.content) == (OK, "step 3")
    assert (second.status, second.content) == (OK, '{"done": 2}')
    seen = progress_and_results(events)
    assert [item for item in seen if item[1] == first.call_id] == [
        ("progress", first.call_id, "step 1"),
        ("progress", first.call_id, "step 2"),
        ("result", first.call_id, "step 3"),
    ]
    assert [item for item in seen if item[1] == second.call_id] == [
        ("progress", second.call_id, {"done": 1}),
        ("result", second.call_id, '{"done": 2}'),
    ]
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert {(p.name, p.round) for p in progress} == {("steps", 1), ("asteps", 1)}


def test_a_sync_generators_return_value_is_the_result_and_every_yield_is_progress() -> None:
    model = ScriptedModel([tool_call_turn(("with_return", {"n": 2})), text_turn("done")])
    events, result = stream_run(Agent(model, [with_return]))
    [answer] = results(result.messages)
    assert answer.content == "finished"
    assert [e.value for e in events if isinstance(e, ToolProgress)] == [0, 1]


def test_a_generator_that_yields_nothing_is_an_error_result() -> None:
    @tool
    async def nothing() -> AsyncIterator[str]:
        """Yields nothing."""
        if False:  # pragma: no cover - makes this an async generator
            yield "never"

    model = ScriptedModel([tool_call_turn(("steps", {"n": 0}), ("nothing", {})), text_turn("done")])
    _, result = stream_run(Agent(model, [steps, nothing]))
    answers = results(result.messages)
    assert [r.status for r in answers] == [ERROR, ERROR]  # exactly one result each
    assert all("yielded nothing" in r.content for r in answers)


def test_an_async_generator_times_out_like_any_tool_and_is_closed() -> None:
    closed = asyncio.Event()

    @tool(timeout=0.05)
    async def hang() -> AsyncIterator[str]:
        """Reports, then waits forever."""
        try:
            yield "started"
            yield "working"
            await asyncio.Event().wait()
            yield "never"
        finally:
            closed.set()

    seen: list[Any] = []

    async def main() -> list[ToolResult]:
        scope = ToolScope("run-1", 1, emit=seen.append)
        turn = Executor([hang]).turn(early=False, scope=scope)
        async with turn:
            await turn.finish([request("hang")])
        return turn.results()

    [result] = run_fake_clock(main())
    assert result.status is TIMEOUT
    assert closed.is_set()
    assert [p.value for p in seen] == ["started"]  # "working" was never followed


def test_a_sync_generator_given_up_at_its_timeout_stops_at_its_next_yield() -> None:
    started, release, closed = threading.Event(), threading.Event(), threading.Event()
    after: list[str] = []

    @tool(timeout=0.05)
    def blocked() -> Iterator[str]:
        """Blocks between two yields."""
        try:
            yield "one"
            started.set()
            release.wait(10)
            yield "two"
            after.append("ran on")  # never: the generator is closed at "two"
            yield "three"
        finally:
            closed.set()

    executor = Executor([blocked], pool=WorkerPool("test-generator"))
    try:
        [result] = run_fake_clock(
            executor.execute([request("blocked")]), before_time_passes=[started]
        )
    finally:
        release.set()
    assert result.status is TIMEOUT
    assert closed.wait(10)
    assert after == []


def test_a_generators_retries_run_it_again_from_the_start() -> None:
    attempts: list[int] = []

    @tool(idempotent=True, retries=1)
    def flaky() -> Iterator[str]:
        """Fails after its first yield, once."""
        attempts.append(1)
        yield "working"
        if len(attempts) == 1:
            raise ConnectionError("lost it")
        yield "done"

    seen: list[Any] = []

    async def main() -> list[ToolResult]:
        scope = ToolScope("run-1", 1, emit=seen.append)
        turn = Executor([flaky], ExecutionOptions(backoff_base=0.0)).turn(early=False, scope=scope)
        async with turn:
            await turn.finish([request("flaky")])
        return turn.results()

    [result] = run(main())
    assert (result.status, result.content, len(attempts)) == (OK, "done", 2)
    # The first attempt raised after "working": that value was progress, not a result.
    assert [p.value for p in seen] == ["working", "working"]


def test_cancelling_the_run_cancels_a_running_generator_with_one_result() -> None:
    entered, closed = asyncio.Event(), asyncio.Event()

    @tool
    async def forever() -> AsyncIterator[int]:
        """Reports forever."""
        try:
            i = 0
            while True:
                i += 1
                yield i
                entered.set()
                await asyncio.Event().wait()
        finally:
            closed.set()

    model = ScriptedModel([tool_call_turn(("forever", {})), text_turn("done")])
    agent = Agent(model, [forever])

    async def main() -> list[Any]:
        stream = agent.run_stream("go")
        task = asyncio.ensure_future(_drain(stream))
        await entered.wait()
        await stream.aclose()
        await asyncio.gather(task, return_exceptions=True)
        return stream.messages

    messages = asyncio.run(main())
    [answer] = results(messages)
    assert answer.status is CANCELLED
    assert closed.is_set()


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass


# -- early starts and the key's position -----------------------------------------------------


def test_an_early_call_whose_position_changed_runs_again_with_its_final_key() -> None:
    """The key is made from the call's position; an earlier call retracted after a later
    one started early moves it: the start is discarded and the call runs again."""

    @tool(concurrency_safe=True, side_effects=False)
    async def look(q: str, ctx: ToolContext) -> str:
        """Reads."""
        return ctx.idempotency_key

    first, second = request("look", {"q": "a"}, index=0), request("look", {"q": "b"}, index=1)
    scope = ToolScope("run-7", 3)

    async def main() -> tuple[list[ToolResult], bool]:
        turn = Executor([look]).turn(scope=scope)
        async with turn:
            for req in (first, second):
                turn.started(ToolCallStarted(req.index, req.id, req.name))
                turn.ready(
                    ToolCallReady(req.index, ToolCall(req.id, req.name, req.raw_arguments), req)
                )
            turn.retract(0, "cut off")
            await turn.finish([second])
        [moved] = [item for item in turn.discarded if item.index == second.index]
        return turn.results(), moved.ran

    [result], ran = run(main())
    key = idempotency_key("run-7", 3, 0)
    # The discarded start ran already where tasks start eagerly (Python 3.12+: the tool
    # never suspends); its replacement then says so after its own text.
    assert result.content.startswith(key)
    assert ran is (sys.version_info >= (3, 12))
    assert ("had already started" in result.content) is ran


# -- the idempotency example (docs/tools.md) ---------------------------------------------------------


def test_the_docs_example_charges_once_when_a_lost_response_is_retried() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "tools.md"
    text = page.read_text(encoding="utf-8")
    section = text[text.index("## Tool context, idempotency keys and progress") :]
    [example] = re.findall(r"```python\n(.*?)```", section, re.DOTALL)[:1]
    namespace: dict[str, Any] = {}
    exec(compile(example, "docs/tools.md:idempotency", "exec"), namespace)

    class Bank:
        """Deduplicates by key; its first answer is lost on the way back."""

        def __init__(self) -> None:
            self.charges: dict[str, tuple[str, int]] = {}
            self.requests = 0

        def charge(self, customer: str, cents: int, *, idempotency_key: str) -> str:
            self.requests += 1
            self.charges.setdefault(idempotency_key, (customer, cents))
            if self.requests == 1:
                raise ConnectionError("the response was lost")
            return f"charged {customer} {cents}"

    bank = Bank()
    model = ScriptedModel(
        [tool_call_turn(("charge", {"customer": "ann", "cents": 500})), text_turn("ok")]
    )
    agent = Agent(model, [namespace["charge"]], deps={"bank": bank},
                  execution=ExecutionOptions(backoff_base=0.0))  # fmt: skip
    events, result = stream_run(agent)
    [answer] = results(result.messages)
    assert (answer.status, answer.content) == (OK, "charged ann 500")
    assert bank.requests == 2 and list(bank.charges.values()) == [("ann", 500)]
    assert [e.value for e in events if isinstance(e, ToolProgress)] == ["charging 500 cents"] * 2


# -- any sequence of yields ---------------------------------------------------------------------

_values = st.lists(st.one_of(st.integers(), st.text(max_size=8), st.none()), max_size=6)


@settings(max_examples=60, deadline=None)
@given(_values, st.booleans(), st.booleans())
def test_any_yields_give_every_value_but_the_last_as_progress_and_one_result(
    values: list[Any], asynchronous: bool, fails: bool
) -> None:
    """Then a raise: every value was progress, and the result is the error."""
    if asynchronous:

        async def produce() -> AsyncIterator[Any]:
            for value in values:
                await asyncio.sleep(0)
                yield value
            if fails:
                raise ValueError("broke at the end")

    else:

        def produce() -> Iterator[Any]:  # type: ignore[misc]
            yield from values
            if fails:
                raise ValueError("broke at the end")

    seen: list[Any] = []

    async def main() -> list[ToolResult]:
        turn = Executor([tool(produce)]).turn(
            early=False, scope=ToolScope("r", 1, emit=seen.append)
        )
        async with turn:
            await turn.finish([request("produce")])
        return turn.results()

    [result] = run(main())
    progress = [p.value for p in seen]
    if fails:
        assert result.status is ERROR and "broke at the end" in result.content
        assert progress == values
    elif not values:
        assert result.status is ERROR and "yielded nothing" in result.content and seen == []
    else:
        assert (result.status, result.content) == (OK, render_content(values[-1]))
        assert progress == values[:-1]
