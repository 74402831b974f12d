"""The agent loop over a scripted model: rounds, events, limits, loops, faults, resume."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.context.events import TokensCounted
from toolwire.errors import (
    BudgetExceededError,
    CallerError,
    HistoryError,
    LoopDetectedError,
    MaxRoundsExceededError,
    TurnError,
    UsageLimitExceededError,
)
from toolwire.messages import AssistantMessage, ToolCall, ToolResult, ToolStatus, UserMessage
from toolwire.policies import LoopPolicy, RetryPolicy, UsageLimits
from toolwire.run import (
    Agent,
    CallDiscarded,
    LoopWarning,
    RequestStarted,
    RoundEnd,
    RunFinished,
    RunResult,
    ToolResultReady,
    resolve_model,
)
from toolwire.run.events import ObservedEvent, ResponseDone, RunEnded, RunStarted
from toolwire.run.model import ModelEvent
from toolwire.run.observers import new_run_id
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import tool
from toolwire.turn import Notice
from toolwire.wire import COMPILED
from toolwire.wire.events import TextDelta, ToolCallDelta, ToolCallReady, ToolCallStarted

from .helpers import GatedModel, Step, answered_in_order, run, run_fake_clock

OK, ERROR, CANCELLED, NOT_EXECUTED = (
    ToolStatus.OK,
    ToolStatus.ERROR,
    ToolStatus.CANCELLED,
    ToolStatus.NOT_EXECUTED,
)


@tool(concurrency_safe=True)
async def weather(city: str) -> str:
    """The weather in a city."""
    await asyncio.sleep(0)
    return f"sunny in {city}"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _results(messages: list[Any]) -> list[ToolResult]:
    return [m for m in messages if isinstance(m, ToolResult)]


# -- the basic loop ------------------------------------------------------------------------


def test_run_two_rounds_to_a_final_answer() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 5}
    model = ScriptedModel(
        [
            tool_call_turn(
                ("weather", {"city": "Paris"}, "call_0"),
                ("add", {"a": 2, "b": 3}, "call_1"),
                fragment=4,
                usage=usage,
            ),
            text_turn("Sunny, and 5.", pieces=3, usage=usage),
        ]
    )
    agent = Agent(model=model, tools=[weather, add], system="Be brief.")
    result = agent.run_sync("Weather in Paris, and 2+3?")
    assert result.output == "Sunny, and 5."
    assert (result.requests, result.rounds, result.tool_calls) == (2, 1, 2)
    assert result.usage.input_tokens == 20 and result.usage.output_tokens == 10
    answered_in_order(result.messages)
    assert [r.content for r in _results(result.messages)] == ["sunny in Paris", "5"]
    first, second = model.requests
    assert first["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris, and 2+3?"},
    ]
    # read_result (the context policy's reader of cut results) is offered from the start
    assert [t["function"]["name"] for t in first["tools"]] == ["weather", "add", "read_result"]
    assert second["messages"][-2:] == [
        {"role": "tool", "tool_call_id": "call_0", "content": "sunny in Paris"},
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
    ]
    assert result.diagnostics.valid == 2 and result.diagnostics.total == 0


def test_await_run_and_asyncio_inside_tools() -> None:
    @tool
    async def nap() -> str:
        """Uses asyncio."""
        await asyncio.sleep(0.001)
        return "rested"

    model = ScriptedModel([tool_call_turn(("nap", {})), text_turn("ok")])
    result = run(Agent(model, [nap]).run("go"))
    assert _results(result.messages)[0].content == "rested"


def test_run_sync_hands_over_its_result_without_formatting_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``run_sync`` never formats the run's result: on exit ``asyncio.run`` (3.11) may
    format its main task, whose repr holds the task's result's (the whole history)."""
    formatted: list[RunResult] = []

    def counting_repr(result: RunResult) -> str:
        formatted.append(result)
        return "RunResult(...)"

    monkeypatch.setattr(RunResult, "__repr__", counting_repr)
    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 2})), text_turn("3")])
    result = Agent(model, [add]).run_sync("1+2")
    assert result.output == "3"
    assert formatted == []


def test_run_sync_inside_a_loop_is_a_caller_error() -> None:
    agent = Agent(ScriptedModel([text_turn("hi")]), [])

    async def body() -> None:
        agent.run_sync("x")

    with pytest.raises(CallerError, match="inside a running event loop"):
        run(body())


def test_run_stream_events() -> None:
    model = ScriptedModel(
        [tool_call_turn(("weather", {"city": "Oslo"}), fragment=5), text_turn("Done.", pieces=2)]
    )
    agent = Agent(model, [weather])

    async def body() -> tuple[list[Any], Any]:
        events = []
        async with agent.run_stream("hi") as stream:
            async for event in stream:
                events.append(event)
        return events, stream

    events, stream = run(body())
    kinds = [type(e) for e in events]
    assert kinds[0] is RequestStarted and kinds[-1] is RunFinished
    for kind in (
        ToolCallStarted,
        ToolCallDelta,
        ToolCallReady,
        ToolResultReady,
        RoundEnd,
        TextDelta,
    ):
        assert kind in kinds
    assert kinds.index(ToolCallReady) < kinds.index(ToolResultReady) < kinds.index(RoundEnd)
    rounds = [e for e in events if isinstance(e, RoundEnd)]
    assert [r.round for r in rounds] == [1, 2]
    assert [r.status for r in rounds[0].results] == [OK]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Done."
    assert stream.result.output == "Done."
    assert stream.messages == stream.result.messages


def test_stream_result_before_the_end_is_a_caller_error() -> None:
    stream = Agent(ScriptedModel([text_turn("x")]), []).run_stream("hi")
    with pytest.raises(CallerError):
        _ = stream.result


# -- invalid calls and failure budgets -------------------------------------------------------


def test_invalid_calls_get_their_error_and_the_model_another_turn() -> None:
    model = ScriptedModel(
        [
            tool_call_turn(("add", {"a": 1}), ("add", {"a": 1, "b": "two"})),
            tool_call_turn(("add", {"a": 1, "b": 2})),
            text_turn("3"),
        ]
    )
    result = Agent(model, [add]).run_sync("1+2")
    statuses = [r.status for r in _results(result.messages)]
    assert statuses == [ERROR, ERROR, OK]
    tool_messages = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "required parameter(s) missing: b" in tool_messages[0]["content"]
    assert result.diagnostics.counts == {"missing_required": 1, "schema_violation": 1}


def test_failure_budget_stops_the_run_with_a_complete_history() -> None:
    model = ScriptedModel(
        [tool_call_turn(("nope", {})), tool_call_turn(("nope", {})), text_turn("x")]
    )
    stream = Agent(model, [add], retry_policy=RetryPolicy(budgets={"unknown_tool": 1})).run_stream(
        "hi"
    )

    async def body() -> None:
        async for _ in stream:
            pass

    with pytest.raises(BudgetExceededError) as info:
        run(body())
    assert info.value.kind == "unknown_tool"
    answered_in_order(stream.messages)
    assert len(_results(stream.messages)) == 2


def test_tool_errors_count_against_the_budget() -> None:
    @tool
    async def broken() -> str:
        """Fails."""
        raise ValueError("nope")

    model = ScriptedModel([tool_call_turn(("broken", {})) for _ in range(3)] + [text_turn("x")])
    agent = Agent(
        model,
        [broken],
        retry_policy=RetryPolicy(budgets={"tool_error": 1}),
        loop_policy=LoopPolicy(0, 0, 0, 0),
    )
    with pytest.raises(BudgetExceededError) as info:
        agent.run_sync("go")
    assert info.value.fault == "tool" and info.value.kind == "tool_error"


# -- max_rounds ---------------------------------------------------------------------------------


def test_max_rounds_forces_a_final_answer() -> None:
    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 1})), text_turn("forced answer")])
    result = Agent(model, [add], max_rounds=1).run_sync("go")
    assert result.output == "forced answer" and result.forced_final
    assert [r["tool_choice"] for r in model.requests] == ["auto", "none"]


def test_max_rounds_can_raise_instead() -> None:
    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 1}))])
    with pytest.raises(MaxRoundsExceededError) as info:
        Agent(model, [add], max_rounds=1, on_max_rounds="raise").run_sync("go")
    answered_in_order(info.value.messages)
    assert len(model.requests) == 1


def test_calls_in_the_forced_final_turn_are_not_executed() -> None:
    seen: list[int] = []

    @tool
    def count() -> int:
        """Counts calls."""
        seen.append(1)
        return len(seen)

    model = ScriptedModel([tool_call_turn(("count", {})), tool_call_turn(("count", {}, "again"))])
    with pytest.raises(MaxRoundsExceededError, match="tool_choice='none'") as info:
        Agent(model, [count], max_rounds=1).run_sync("go")
    assert seen == [1]
    results = _results(info.value.messages)
    assert [r.status for r in results] == [OK, NOT_EXECUTED]
    answered_in_order(info.value.messages)


# -- request options ---------------------------------------------------------------------------------


def test_tool_choice_parallel_flag_and_settings_pass_through() -> None:
    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 1})), text_turn("2")])
    agent = Agent(
        model, [add], tool_choice="add", parallel_tool_calls=False, settings={"temperature": 0}
    )
    agent.run_sync("go")
    # a named (or required) choice applies until the first round with calls, then auto
    assert [r["tool_choice"] for r in model.requests] == ["add", "auto"]
    assert [r["parallel_tool_calls"] for r in model.requests] == [False, False]
    assert model.requests[0]["settings"] == {"temperature": 0}
    for choice in ("auto", "required", "none"):
        assert Agent(model, [add], tool_choice=choice).tool_choice == choice


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tool_choice": "missing"},
        {"max_rounds": -1},
        {"on_max_rounds": "retry"},
        {"parallel_tool_calls": "yes"},
        {"system": 3},
    ],
)
def test_bad_agent_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(CallerError):
        Agent(ScriptedModel([]), [add], **kwargs)


def test_model_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ScriptedModel([])
    assert resolve_model(model) is model
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # built offline; no request is sent
    assert resolve_model("openai:gpt-4.1-mini").name == "openai:gpt-4.1-mini"
    Agent("openai:gpt-4.1-mini", [add])
    with pytest.raises(CallerError, match="no-such-provider"):
        Agent("no-such-provider:x", [])
    with pytest.raises(CallerError, match="not a model"):
        resolve_model(42)  # type: ignore[arg-type]


def test_a_run_needs_a_user_message() -> None:
    with pytest.raises(CallerError, match="no user message"):
        Agent(ScriptedModel([text_turn("x")]), []).run_sync()


# -- loop detection -----------------------------------------------------------------------------------


def test_repeated_calls_warn_then_stop() -> None:
    same = [tool_call_turn(("weather", {"city": "Rome"})) for _ in range(3)]
    model = ScriptedModel([*same, text_turn("never")])
    agent = Agent(
        model,
        [weather],
        loop_policy=LoopPolicy(repeat_warn=2, repeat_stop=3, stall_warn=0, stall_stop=0),
    )
    stream = agent.run_stream("go")

    async def body() -> list[Any]:
        return [event async for event in stream]

    with pytest.raises(LoopDetectedError) as info:
        run(body())
    assert info.value.kind == "repeated_call" and info.value.count == 3
    results = _results(info.value.messages)
    assert "Warning from toolwire" not in results[0].content
    assert "made this exact call" in results[1].content
    # the model read the warning in its next request
    assert "made this exact call" in model.requests[2]["messages"][-1]["content"]
    answered_in_order(stream.messages)


def test_loop_warning_events_and_diagnostics() -> None:
    same = [tool_call_turn(("weather", {"city": "Rome"})) for _ in range(2)]
    model = ScriptedModel([*same, text_turn("fine")])
    agent = Agent(
        model,
        [weather],
        loop_policy=LoopPolicy(repeat_warn=2, repeat_stop=4, stall_warn=0, stall_stop=0),
    )

    async def body() -> list[Any]:
        async with agent.run_stream("go") as stream:
            return [event async for event in stream]

    events = run(body())
    warnings = [e for e in events if isinstance(e, LoopWarning)]
    assert [(w.kind, w.tool, w.count) for w in warnings] == [("repeated_call", "weather", 2)]
    result = events[-1].result
    assert result.diagnostics.counts == {"loop": 1}


def test_rounds_without_progress_stop_the_run() -> None:
    turns = [tool_call_turn(("weather", {"city": c})) for c in ["A", "B", "A", "B", "A", "B"]]
    model = ScriptedModel([*turns, text_turn("x")])
    agent = Agent(
        model,
        [weather],
        loop_policy=LoopPolicy(repeat_warn=0, repeat_stop=0, stall_warn=2, stall_stop=3),
    )
    with pytest.raises(LoopDetectedError) as info:
        agent.run_sync("go")
    assert info.value.kind == "no_progress" and info.value.count == 3
    contents = [r.content for r in _results(info.value.messages)]
    assert ["produced nothing new" in c for c in contents] == [False, False, False, True, False]


# -- usage limits ------------------------------------------------------------------------------------


def test_request_limit() -> None:
    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 1})), text_turn("2")])
    with pytest.raises(UsageLimitExceededError) as info:
        Agent(model, [add], limits=UsageLimits(max_requests=1)).run_sync("go")
    assert info.value.limit == "max_requests"
    answered_in_order(info.value.messages)


def test_tool_call_limit_answers_the_turn_not_executed() -> None:
    model = ScriptedModel(
        [
            tool_call_turn(("add", {"a": 1, "b": 1})),
            tool_call_turn(("add", {"a": 2, "b": 2}), ("add", {"a": 3, "b": 3})),
        ]
    )
    with pytest.raises(UsageLimitExceededError) as info:
        Agent(model, [add], limits=UsageLimits(max_tool_calls=2)).run_sync("go")
    assert info.value.limit == "max_tool_calls" and info.value.used == 3
    assert [r.status for r in _results(info.value.messages)] == [OK, NOT_EXECUTED, NOT_EXECUTED]


def test_token_limit() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 20}
    model = ScriptedModel(
        [tool_call_turn(("add", {"a": 1, "b": 1}), usage=usage), text_turn("2", usage=usage)]
    )
    with pytest.raises(UsageLimitExceededError) as info:
        Agent(model, [add], limits=UsageLimits(max_total_tokens=150)).run_sync("go")
    assert info.value.limit == "max_total_tokens" and info.value.used == 240


# -- history check and resume -----------------------------------------------------------------------


def test_history_is_checked_before_every_request() -> None:
    model = ScriptedModel([text_turn("x")])
    broken = [UserMessage("hi"), ToolResult("ghost", "add", "3")]
    with pytest.raises(HistoryError, match="ghost"):
        Agent(model, [add]).run_sync("again", history=broken)
    assert model.requests == []


def test_resume_answers_unanswered_calls_once() -> None:
    ran: list[int] = []

    @tool
    def charge(amount: int) -> str:
        """Charges a card."""
        ran.append(amount)
        return "charged"

    saved = [
        UserMessage("pay"),
        AssistantMessage(
            [ToolCall("c1", "charge", '{"amount": 5}'), ToolCall("c2", "charge", '{"amount": 6}')]
        ),
        ToolResult("c1", "charge", "charged"),
    ]
    model = ScriptedModel([text_turn("paid 5; 6 did not go through")])
    result = Agent(model, [charge]).run_sync(None, history=saved)
    assert ran == []
    answered_in_order(result.messages)
    sent = model.requests[0]["messages"]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["c1", "c2"]
    # c2 may have been running when the process stopped: interrupted, not "never ran".
    assert [r.status for r in _results(result.messages)] == [OK, ToolStatus.INTERRUPTED]
    assert saved[-1] == ToolResult("c1", "charge", "charged") and len(saved) == 3  # not mutated


# -- early execution through the loop ------------------------------------------------------------------


def _call_chunks(index: int, call_id: str, name: str, args: str) -> list[dict[str, Any]]:
    return (
        tool_call_turn((name, args, call_id))[1:-1]
        if index == 0
        else [
            {
                **chunk,
                "choices": [
                    {
                        **chunk["choices"][0],
                        "delta": {
                            "tool_calls": [
                                {**chunk["choices"][0]["delta"]["tool_calls"][0], "index": index}
                            ]
                        },
                    }
                ],
            }
            for chunk in tool_call_turn((name, args, call_id))[1:-1]
        ]
    )


def test_safe_calls_start_while_the_model_streams() -> None:
    async def body() -> list[str]:
        log: list[str] = []
        started = asyncio.Event()

        @tool(concurrency_safe=True, side_effects=False)
        async def look(key: str) -> str:
            """Read-only."""
            log.append(f"look {key}")
            started.set()
            return key

        @tool
        async def change(key: str) -> str:
            """Writes."""
            log.append(f"change {key}")
            return key

        async def tool_started() -> None:
            await asyncio.wait_for(started.wait(), 5)  # fails the test if nothing started
            log.append("stream goes on")

        async def nothing_more() -> None:
            for _ in range(5):
                await asyncio.sleep(0)
            log.append("stream ends")

        head, end = tool_call_turn()[0], tool_call_turn()[-1]
        model = GatedModel(
            [
                [
                    head,
                    *_call_chunks(0, "a", "look", '{"key": "1"}'),
                    tool_started,
                    *_call_chunks(1, "b", "change", '{"key": "2"}'),
                    *_call_chunks(2, "c", "look", '{"key": "3"}'),
                    nothing_more,
                    end,
                ],
                text_turn("done"),
            ]
        )
        result = await Agent(model, [look, change]).run("go")
        answered_in_order(result.messages)
        return log

    assert run(body()) == ["look 1", "stream goes on", "stream ends", "change 2", "look 3"]


def test_a_call_whole_in_one_chunk_waits_for_an_earlier_call_still_streaming() -> None:
    """The run loop tells a call's start with its first close when the two come
    together; a call whole in one chunk, after an earlier call that started and is
    still streaming, must still wait for that call (the earlier start is told first,
    also when the next item is the later call's start: no deltas in between)."""

    class NoDeltas(GatedModel):
        async def _play(self, steps: list[Step]) -> AsyncIterator[ModelEvent]:
            async for event in super()._play(steps):
                if not isinstance(event, ToolCallDelta):  # as a provider without deltas
                    yield event

    async def body() -> list[str]:
        log: list[str] = []

        @tool(concurrency_safe=True, side_effects=False)
        async def look(key: str) -> str:
            """Read-only."""
            log.append(f"look {key}")
            return key

        async def second_closed() -> None:
            for _ in range(5):
                await asyncio.sleep(0)
            log.append("second closed")

        head, end = tool_call_turn()[0], tool_call_turn()[-1]
        first = tool_call_turn(("look", '{"key": "1"}', "a"), fragment=4)[1:-1]
        model = NoDeltas(
            [
                [
                    head,
                    first[0],  # the first call starts, its arguments still open
                    *_call_chunks(1, "b", "look", '{"key": "2"}'),  # whole in one chunk
                    second_closed,
                    *first[1:],
                    end,
                ],
                text_turn("done"),
            ]
        )
        result = await Agent(model, [look]).run("go")
        answered_in_order(result.messages)
        return log

    assert run(body()) == ["second closed", "look 1", "look 2"]


def test_early_execution_can_be_turned_off() -> None:
    async def body() -> list[str]:
        log: list[str] = []

        @tool(concurrency_safe=True)
        async def look(key: str) -> str:
            """Read-only."""
            log.append("look")
            return key

        async def mark() -> None:
            for _ in range(5):
                await asyncio.sleep(0)
            log.append("stream ends")

        model = GatedModel(
            [
                [*tool_call_turn(("look", {"key": "1"}))[:-1], mark, tool_call_turn()[-1]],
                text_turn("ok"),
            ]
        )
        await Agent(model, [look], early_execution=False).run("go")
        return log

    assert run(body()) == ["stream ends", "look"]


def test_a_broken_turn_cancels_started_calls() -> None:
    async def body() -> tuple[list[Any], Any]:
        began = asyncio.Event()

        @tool(concurrency_safe=True, side_effects=False)
        async def hang(key: str) -> str:
            """Never returns."""
            began.set()
            await asyncio.Event().wait()
            return key

        async def wait_started() -> None:
            await asyncio.wait_for(began.wait(), 5)

        nameless = {
            "id": "x",
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]},
                    "finish_reason": None,
                }
            ],
        }
        model = GatedModel(
            [
                [
                    tool_call_turn()[0],
                    *_call_chunks(0, "a", "hang", '{"key": "1"}'),
                    wait_started,
                    nameless,
                    tool_call_turn()[-1],
                ]
            ]
        )
        stream = Agent(model, [hang]).run_stream("go")
        events: list[Any] = []
        with pytest.raises(TurnError):
            async for event in stream:
                events.append(event)
        return events, stream

    events, stream = run(body())
    discarded = [e for e in events if isinstance(e, CallDiscarded)]
    assert [(d.call_id, d.name) for d in discarded] == [("a", "hang")]
    assert "turn failed" in discarded[0].reason
    assert not any(
        isinstance(m, AssistantMessage) for m in stream.messages
    )  # the broken turn is not history


# -- interruption -------------------------------------------------------------------------------------


def test_keyboard_interrupt_in_a_tool() -> None:
    @tool
    async def ctrl_c() -> str:
        """Interrupts."""
        raise KeyboardInterrupt

    model = ScriptedModel(
        [tool_call_turn(("ctrl_c", {}), ("add", {"a": 1, "b": 2})), text_turn("x")]
    )
    agent = Agent(model, [ctrl_c, add])
    with pytest.raises(KeyboardInterrupt):
        agent.run_sync("go")
    stream = agent.run_stream("go")
    model2 = ScriptedModel([tool_call_turn(("ctrl_c", {}), ("add", {"a": 1, "b": 2}))])
    stream = Agent(model2, [ctrl_c, add]).run_stream("go")

    async def consume() -> None:
        async for _ in stream:
            pass

    with pytest.raises(KeyboardInterrupt):
        run(consume())
    answered_in_order(stream.messages)
    assert [r.status for r in _results(stream.messages)] == [CANCELLED, NOT_EXECUTED]


def test_closing_the_stream_cancels_the_run_and_completes_the_history() -> None:
    async def body() -> Any:
        @tool(concurrency_safe=True)
        async def hang() -> str:
            """Never returns."""
            await asyncio.Event().wait()
            return "never"

        model = ScriptedModel(
            [tool_call_turn(("hang", {}), ("hang", {}, "b"), ("add", {"a": 1, "b": 1}, "c"))]
        )
        stream = Agent(model, [hang, add]).run_stream("go")
        async with stream:
            async for event in stream:
                if isinstance(event, ToolCallReady) and event.index == 2:
                    break
        return stream

    stream = run(body())
    answered_in_order(stream.messages)
    assert [r.status for r in _results(stream.messages)] == [CANCELLED, CANCELLED, NOT_EXECUTED]


def test_cancelling_the_consumer_cancels_the_run() -> None:
    async def body() -> Any:
        began = asyncio.Event()

        @tool
        async def hang() -> str:
            """Never returns."""
            began.set()
            await asyncio.Event().wait()
            return "never"

        stream = Agent(ScriptedModel([tool_call_turn(("hang", {}))]), [hang]).run_stream("go")

        async def consume() -> None:
            async for _ in stream:
                pass

        task = asyncio.create_task(consume())
        await began.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return stream

    stream = run(body())
    assert [r.status for r in _results(stream.messages)] == [CANCELLED]
    answered_in_order(stream.messages)


# -- exactly one result per call, through the whole loop ------------------------------------------------


@tool(concurrency_safe=True)
async def p_ok(n: int) -> int:
    """ok"""
    return n


@tool(timeout=0.01)
async def p_hang(n: int) -> int:
    """hangs"""
    await asyncio.Event().wait()
    return n


@tool(concurrency_safe=True)
def p_raise(n: int) -> int:
    """raises"""
    raise RuntimeError("no")


@tool
async def p_interrupt(n: int) -> int:
    """ctrl-c"""
    raise KeyboardInterrupt


@tool(concurrency_safe=True)
def p_sync(n: int) -> int:
    """sync"""
    return n


PROPERTY_TOOLS = [p_ok, p_hang, p_raise, p_interrupt, p_sync]
NAMES = ["p_ok", "p_hang", "p_raise", "p_interrupt", "p_sync", "p_unknown", "p_invalid"]


def _property_call(position: int, name: str) -> tuple[str, Any, str]:
    if name == "p_invalid":
        return ("p_ok", {"n": "x"}, f"c{position}")
    return (name, {"n": position}, f"c{position}")


@settings(max_examples=100, deadline=None)
@given(
    rounds=st.lists(
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=5), min_size=1, max_size=3
    ),
    stop_after=st.none() | st.integers(min_value=0, max_value=40),
)
def test_every_call_gets_exactly_one_result_whatever_happens(
    rounds: list[list[str]], stop_after: int | None
) -> None:
    turns = []
    position = 0
    for names in rounds:
        calls = []
        for name in names:
            calls.append(_property_call(position, name))
            position += 1
        turns.append(tool_call_turn(*calls, fragment=3))
    turns.append(text_turn("end"))
    agent = Agent(
        ScriptedModel(turns),
        PROPERTY_TOOLS,
        retry_policy=RetryPolicy(
            budgets=dict.fromkeys(
                ("tool_error", "timeout", "unknown_tool", "schema_violation"), 100
            ),
            breaker=0,
        ),
        loop_policy=LoopPolicy(0, 0, 0, 0),
    )
    stream = agent.run_stream("go")

    async def body() -> None:
        count = 0
        async with stream:
            async for _ in stream:
                count += 1
                if stop_after is not None and count >= stop_after:
                    break

    try:
        run_fake_clock(body())  # p_hang's timeout passes at once, deterministically
    except KeyboardInterrupt:
        pass
    answered_in_order(stream.messages)
    for message in stream.messages:
        if (
            isinstance(message, ToolResult)
            and message.name == "p_ok"
            and "was not run" in message.content
        ):
            assert message.status is ERROR


def test_a_server_that_numbers_calls_per_turn_runs_to_the_end() -> None:
    """``call_0`` in every turn ended the run with a HistoryError blamed on the caller;
    results belong to the turn before them, so the history is valid."""
    model = ScriptedModel(
        [
            tool_call_turn(("add", {"a": 1, "b": 2}, "call_0")),
            tool_call_turn(("add", {"a": 3, "b": 4}, "call_0")),
            text_turn("3 and 7"),
        ]
    )
    result = Agent(model=model, tools=[add]).run_sync("add twice")
    assert result.output == "3 and 7"
    assert [r.content for r in _results(result.messages)] == ["3", "7"]
    answered_in_order(result.messages)


def test_the_stream_owns_its_run_task_and_leaves_none_behind() -> None:
    """``AgentStream`` started a task nothing owned; now its task scope cancels and
    awaits it on ``aclose``, and a cancellation is not swallowed on the way."""

    @tool(side_effects=False)
    async def wait_forever() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "never"

    async def body() -> tuple[int, Any]:
        stream = Agent(
            ScriptedModel([tool_call_turn(("wait_forever", {}))]), [wait_forever]
        ).run_stream("go")
        async for event in stream:
            if isinstance(event, ToolCallReady):
                break
        await stream.aclose()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return len(others), stream

    left, stream = run(body())
    assert left == 0
    answered_in_order(stream.messages)


def test_failures_are_logged_by_round_and_call_id() -> None:
    model = ScriptedModel(
        [
            tool_call_turn(("add", {"a": "x", "b": 2}, "call_0")),
            tool_call_turn(("add", {"a": 1, "b": "y"}, "call_0")),
            text_turn("gave up"),
        ]
    )
    result = Agent(model=model, tools=[add]).run_sync("add")
    assert [(f.round, f.call_id) for f in result.diagnostics.failures] == [
        (1, "call_0"),
        (2, "call_0"),
    ]


def test_an_observer_gets_every_run_event_of_a_run_nobody_streams() -> None:
    """A run nobody listens to builds none of its events; one observed by a hook (the
    audit log's way in) still emits each of them."""
    seen: list[type] = []

    class Hook:
        def begin(self, start: RunStarted) -> Callable[[ObservedEvent], None]:
            return lambda event: seen.append(type(event))

    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 2})), text_turn("3")])
    result = Agent(model, [add], log=Hook()).run_sync("add")
    assert result.output == "3"
    for kind in (RequestStarted, TokensCounted, ResponseDone, RoundEnd, RunFinished, RunEnded):
        assert kind in seen, kind
    assert seen.count(RequestStarted) == seen.count(ResponseDone) == seen.count(RoundEnd) == 2


def test_run_ids_are_32_random_hex_digits() -> None:
    ids = [new_run_id() for _ in range(1000)]
    assert all(re.fullmatch("[0-9a-f]{32}", run_id) for run_id in ids)
    assert len({run_id[:12] for run_id in ids}) == len(ids)  # short prefixes stay apart


@pytest.mark.parametrize(("text", "noticed"), [('{"add": {"a": 1}}', True), ('{"sum": 1}', False)])
def test_an_answer_naming_a_registered_tool_as_its_only_key_gets_a_notice(
    text: str, noticed: bool
) -> None:
    """The run's tool set is what call_shape tests a name against."""

    async def kinds() -> list[str]:
        stream = Agent(ScriptedModel([text_turn(text)]), [add]).run_stream("add")
        return [e.kind async for e in stream if isinstance(e, Notice)]

    assert ("call_shaped_text" in asyncio.run(kinds())) is noticed


class _Ready(ToolCallReady):
    """A model's own subclass of the call event: still a call that completed."""

    __slots__ = ()


class _SubclassingModel(ScriptedModel):
    """A scripted model whose every ToolCallReady comes as a subclass of it."""

    async def _play(self, number: int, deltas: bool = True) -> AsyncIterator[ModelEvent]:
        async for item in super()._play(number, deltas):
            if item.__class__ is ToolCallReady:
                yield _Ready(item.index, item.call, item.request)
            else:
                yield item


@tool(concurrency_safe=True, side_effects=False)
async def lookup(key: str) -> str:
    """Look a key up (safe to start early)."""
    return key.upper()


# Compiled (mypyc) event classes cannot be subclassed by interpreted code.
@pytest.mark.skipif(COMPILED, reason="the compiled build's events cannot be subclassed")
def test_a_subclass_of_a_call_event_is_read_as_the_call_event() -> None:
    """Its call starts early, while the stream goes on, as a ToolCallReady's does; the
    second run reads the kind the first one worked out."""

    async def records() -> list[ToolResultReady]:
        turns = [tool_call_turn(("lookup", {"key": "a"})), text_turn("A")]
        stream = Agent(_SubclassingModel(turns), [lookup]).run_stream("look a up")
        return [e async for e in stream if isinstance(e, ToolResultReady)]

    for _ in range(2):
        [ready] = asyncio.run(records())
        assert ready.result.content == "A" and ready.call is not None and ready.call.early
