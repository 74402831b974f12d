"""The agent loop's defaults: tool_choice reset, per-round retry budgets, what errors say."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.errors import BudgetExceededError, MaxRoundsExceededError
from toolwire.messages import ToolStatus
from toolwire.policies import FailureBudget, LoopPolicy, RetryPolicy
from toolwire.run import Agent
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import tool
from toolwire.wire.events import Notice

from .helpers import answered_in_order, run


@tool(concurrency_safe=True, side_effects=False)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool(concurrency_safe=True, side_effects=False)
def broken(x: int) -> str:
    """Always fails."""
    raise ValueError("the backend is down")


def _choices(model: ScriptedModel) -> list[Any]:
    return [request["tool_choice"] for request in model.requests]


def test_required_resets_to_auto_after_the_first_round_with_calls() -> None:
    model = ScriptedModel(
        [
            tool_call_turn(("add", {"a": 1, "b": 2})),
            tool_call_turn(("add", {"a": 3, "b": 4})),
            text_turn("3 and 7"),
        ]
    )
    result = Agent(model, [add], tool_choice="required").run_sync("go")
    assert result.output == "3 and 7" and not result.forced_final
    assert _choices(model) == ["required", "auto", "auto"]


def test_required_stays_until_the_model_has_called() -> None:
    # a first turn without calls (the model ignored required) does not reset it
    model = ScriptedModel(
        [text_turn("no"), tool_call_turn(("add", {"a": 1, "b": 2})), text_turn("3")]
    )
    agent = Agent(model, [add], tool_choice="required")
    # the first answer ends the run: a turn without calls is a final answer
    assert agent.run_sync("go").output == "no"
    assert _choices(model) == ["required"]


def test_reset_can_be_turned_off_and_the_stop_says_why() -> None:
    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": i})) for i in range(3)])
    agent = Agent(
        model,
        [add],
        tool_choice="required",
        reset_tool_choice=False,
        max_rounds=2,
        on_max_rounds="raise",
        loop_policy=LoopPolicy(0, 0, 0, 0),
    )
    with pytest.raises(MaxRoundsExceededError) as info:
        agent.run_sync("go")
    assert _choices(model) == ["required", "required"]
    assert "tool_choice='required' was sent every round" in info.value.hint
    assert "reset_tool_choice=True" in info.value.hint
    answered_in_order(info.value.messages)


def test_max_rounds_hint_does_not_suggest_what_is_already_set() -> None:
    model = ScriptedModel(
        [tool_call_turn(("add", {"a": 1, "b": 1})), tool_call_turn(("add", {"a": 2, "b": 2}))]
    )
    with pytest.raises(MaxRoundsExceededError) as info:
        Agent(model, [add], max_rounds=1, on_max_rounds="final_answer").run_sync("go")
    assert "on_max_rounds" not in info.value.hint
    assert "ignores tool_choice='none'" in info.value.hint
    # under on_max_rounds='raise' the suggestion is right, and made
    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 1}))])
    with pytest.raises(MaxRoundsExceededError) as raised:
        Agent(model, [add], max_rounds=1, on_max_rounds="raise").run_sync("go")
    assert "on_max_rounds='final_answer'" in raised.value.hint


def test_four_failing_siblings_are_one_retry_and_the_model_sees_them() -> None:
    four = tool_call_turn(*[("nope", {"i": i}) for i in range(4)])
    model = ScriptedModel([four, tool_call_turn(("add", {"a": 1, "b": 2})), text_turn("3")])
    result = Agent(model, [add], retry_policy=RetryPolicy(budgets={"unknown_tool": 1})).run_sync(
        "go"
    )
    assert result.output == "3"
    second = model.requests[1]["messages"]
    assert len([m for m in second if m["role"] == "tool"]) == 4  # every error reached the model
    assert result.diagnostics.counts["unknown_tool"] == 4  # diagnostics still count each call


def test_a_second_failing_round_spends_the_budget() -> None:
    model = ScriptedModel(
        [tool_call_turn(*[("nope", {"i": i}) for i in range(4)]) for _ in range(2)]
        + [text_turn("x")]
    )
    stream = Agent(model, [add], retry_policy=RetryPolicy(budgets={"unknown_tool": 1})).run_stream(
        "go"
    )

    async def body() -> None:
        async for _ in stream:
            pass

    with pytest.raises(BudgetExceededError) as info:
        run(body())
    assert info.value.kind == "unknown_tool" and info.value.count == 2
    assert len(model.requests) == 2
    answered_in_order(stream.messages)


def test_failure_budget_counts_each_class_and_tool_once_per_round() -> None:
    budget = FailureBudget(RetryPolicy(budgets={"tool_error": 1}, breaker=2))
    budget.begin_round()
    for _ in range(4):
        budget.record("tool_error", "t", "boom")
    assert budget.used("tool_error") == 1
    budget.begin_round()
    with pytest.raises(BudgetExceededError) as info:
        budget.record("tool_error", "t", "boom")
    assert info.value.count == 2
    # without rounds, every failure counts (the budget's own contract)
    plain = FailureBudget(RetryPolicy(budgets={"tool_error": 1}))
    plain.record("tool_error", "t")
    with pytest.raises(BudgetExceededError):
        plain.record("tool_error", "t")


def test_only_validation_failures_carry_the_schema() -> None:
    model = ScriptedModel(
        [tool_call_turn(("broken", {"x": 1}), ("broken", {"x": "one"})), text_turn("sorry")]
    )
    result = Agent(model, [broken]).run_sync("go")
    raised, invalid = [m for m in result.messages if getattr(m, "status", None) is not None]
    assert raised.status is ToolStatus.ERROR and invalid.status is ToolStatus.ERROR
    assert "the backend is down" in raised.content
    assert "JSON Schema" not in raised.content
    assert "JSON Schema" in invalid.content


def test_a_turn_without_calls_under_required_gets_a_notice() -> None:
    model = ScriptedModel([text_turn("I will not call anything.")])
    stream = Agent(model, [add], tool_choice="required").run_stream("go")

    async def body() -> list[Any]:
        return [event async for event in stream]

    events = run(body())
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.kind for n in notices] == ["tool_choice_ignored"]
    assert "tool_choice='required'" in notices[0].message
    assert stream.result.output == "I will not call anything."


def test_no_notice_under_auto() -> None:
    model = ScriptedModel([text_turn("hi")])
    stream = Agent(model, [add]).run_stream("go")

    async def body() -> list[Any]:
        return [event async for event in stream]

    assert not [e for e in run(body()) if isinstance(e, Notice)]


def test_each_executed_call_reports_when_its_tool_begins() -> None:
    from toolwire.run import ToolCallRunning, ToolResultReady

    @tool(concurrency_safe=True, side_effects=False)
    async def later(x: int) -> int:
        """Async tool."""
        return x

    model = ScriptedModel(
        [
            tool_call_turn(("add", {"a": 1, "b": 2}), ("later", {"x": 1}), ("add", {"a": "x"})),
            text_turn("done"),
        ]
    )
    stream = Agent(model, [add, later]).run_stream("go")

    async def body() -> list[Any]:
        return [event async for event in stream]

    events = run(body())
    running = [e.index for e in events if isinstance(e, ToolCallRunning)]
    assert sorted(running) == [0, 1]  # the invalid third call never runs
    for index in running:
        begins = next(
            i for i, e in enumerate(events) if isinstance(e, ToolCallRunning) and e.index == index
        )
        ends = next(
            i for i, e in enumerate(events) if isinstance(e, ToolResultReady) and e.index == index
        )
        assert begins < ends


def test_a_loop_stopped_under_required_says_so() -> None:
    from toolwire.errors import LoopDetectedError

    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 1})) for _ in range(6)])
    agent = Agent(model, [add], tool_choice="required", reset_tool_choice=False)
    with pytest.raises(LoopDetectedError) as info:
        agent.run_sync("go")
    assert "tool_choice='required' was sent every round" in info.value.hint


def _notices(model: ScriptedModel, **options: Any) -> tuple[Any, list[Notice]]:
    stream = Agent(model, [add], **options).run_stream("go")

    async def body() -> list[Any]:
        return [event async for event in stream]

    notices = [e for e in run(body()) if isinstance(e, Notice)]
    return stream.result, notices


def test_a_call_written_as_the_answer_gets_a_notice() -> None:
    # The forced final answer (tool_choice="none") of a small model is often the call it
    # wanted, as JSON text: nothing ran it, and it must not pass for an answer.
    written = '{"name": "add", "arguments": {"a": 1, "b": 2}}'
    model = ScriptedModel([tool_call_turn(("add", {"a": 1, "b": 1})), text_turn(written)])
    result, notices = _notices(model, max_rounds=1)
    assert result.output == written and result.forced_final
    assert [n.kind for n in notices] == ["call_shaped_text"]
    assert "a JSON tool call to add as text" in notices[0].message


def test_an_answer_that_is_not_a_call_gets_no_notice() -> None:
    model = ScriptedModel([text_turn('The sum is 2; as JSON: {"a": 1, "b": 1, "sum": 2}')])
    _, notices = _notices(model)
    assert notices == []
