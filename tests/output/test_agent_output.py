"""``Agent(output_type=T)`` through the ``final_result`` tool, with the scripted model
(the real Chat decoder, assembler, executor and history)."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from typing import Any

import pydantic
import pytest

from toolwire import (
    Agent,
    BudgetExceededError,
    CallerError,
    ContextPolicy,
    PartialOutput,
    Permissions,
    ToolDefinitionError,
    UsageLimitExceededError,
    UsageLimits,
    tool,
)
from toolwire.history import check_history
from toolwire.messages import ToolResult, ToolStatus, UserMessage
from toolwire.output import FINAL_RESULT, OutputSpec, PartialWatch
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.wire.events import TextDelta, ToolCallDelta, ToolCallStarted


class City(pydantic.BaseModel):
    name: str
    population: int


OSLO = {"name": "Oslo", "population": 709000}


def results(messages: list[Any]) -> list[ToolResult]:
    return [m for m in messages if isinstance(m, ToolResult)]


def test_a_valid_final_result_call_ends_the_run_with_an_instance() -> None:
    model = ScriptedModel([tool_call_turn((FINAL_RESULT, OSLO))])
    result = Agent(model, output_type=City).run_sync("Which city?")
    assert result.output == City(name="Oslo", population=709000)
    assert result.requests == 1
    [answer] = results(result.messages)
    assert answer.name == FINAL_RESULT and answer.status is ToolStatus.OK
    check_history(result.messages)  # exactly one result per call
    offered = model.requests[0]["tools"]
    assert [t["function"]["name"] for t in offered] == [FINAL_RESULT]
    assert offered[0]["function"]["parameters"]["required"] == ["name", "population"]


def test_invalid_arguments_go_back_naming_the_field_then_the_model_fixes_them() -> None:
    bad = {"name": "Oslo", "population": "lots"}
    model = ScriptedModel(
        [tool_call_turn((FINAL_RESULT, bad)), tool_call_turn((FINAL_RESULT, OSLO))]
    )
    result = Agent(model, output_type=City).run_sync("Which city?")
    assert result.output.population == 709000
    first = results(result.messages)[0]
    assert first.status is ToolStatus.ERROR
    assert "`population`" in first.content and "valid integer" in first.content
    assert result.diagnostics.counts == {"schema_violation": 1}
    check_history(result.messages)


def test_invalid_arguments_are_bounded_by_the_retry_budget() -> None:
    bad = tool_call_turn((FINAL_RESULT, {"name": "Oslo"}))
    model = ScriptedModel([copy.deepcopy(bad) for _ in range(6)])
    with pytest.raises(BudgetExceededError) as info:
        Agent(model, output_type=City).run_sync("Which city?")
    assert "missing_required" in str(info.value)


def test_a_text_answer_goes_back_as_feedback_within_its_budget() -> None:
    model = ScriptedModel([text_turn("Oslo, I think."), tool_call_turn((FINAL_RESULT, OSLO))])
    result = Agent(model, output_type=City).run_sync("Which city?")
    assert result.output.name == "Oslo"
    feedback = [m for m in result.messages if isinstance(m, UserMessage)][-1]
    assert FINAL_RESULT in feedback.content
    assert result.diagnostics.counts == {"no_output": 1}

    stubborn = ScriptedModel([text_turn("Oslo.") for _ in range(4)])
    with pytest.raises(BudgetExceededError) as info:
        Agent(stubborn, output_type=City).run_sync("Which city?")
    assert "no_output" in str(info.value)
    assert stubborn.remaining == 1  # two retries, then the third text answer stopped it


def test_a_plain_type_is_wrapped_under_result() -> None:
    model = ScriptedModel([tool_call_turn((FINAL_RESULT, {"result": ["a", "b"]}))])
    result = Agent(model, output_type=list[str]).run_sync("Letters?")
    assert result.output == ["a", "b"]
    schema = model.requests[0]["tools"][0]["function"]["parameters"]
    assert schema["properties"]["result"] == {"items": {"type": "string"}, "type": "array"}


def test_text_output_stays_the_default() -> None:
    for output_type in (None, str):
        model = ScriptedModel([text_turn("plain")])
        result = Agent(model, output_type=output_type).run_sync("hi")
        assert result.output == "plain"
        assert model.requests[0]["tools"] == []


def test_the_forced_last_request_names_final_result_and_runs_it() -> None:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return "709000 people"

    model = ScriptedModel(
        [tool_call_turn(("lookup", {"city": "Oslo"})), tool_call_turn((FINAL_RESULT, OSLO))]
    )
    result = Agent(model, [lookup], output_type=City, max_rounds=1).run_sync("Which city?")
    assert result.output.name == "Oslo" and result.forced_final
    forced = model.requests[1]
    assert forced["tool_choice"] == FINAL_RESULT  # never "none"
    assert [t["function"]["name"] for t in forced["tools"]] == [FINAL_RESULT]
    assert results(result.messages)[-1].status is ToolStatus.OK


def test_final_result_is_never_routed_out() -> None:
    tools = []
    for i in range(6):

        def fn(query: str) -> str:
            return query

        fn.__name__ = f"weather_{i}"
        fn.__doc__ = "Weather for a place."
        tools.append(tool(fn))
    model = ScriptedModel([tool_call_turn((FINAL_RESULT, OSLO))])
    policy = ContextPolicy(route_threshold=2, route_top_k=1)
    Agent(model, tools, output_type=City, context=policy).run_sync("weather please")
    names = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert FINAL_RESULT in names and len(names) < 7


def test_final_result_is_never_put_to_approval() -> None:
    asked: list[str] = []

    def approve(request: Any) -> bool:
        asked.append(request.name)
        return False

    model = ScriptedModel([tool_call_turn((FINAL_RESULT, OSLO))])
    agent = Agent(model, output_type=City, permissions=Permissions(ask=["*"]), approve=approve)
    assert agent.run_sync("Which city?").output.name == "Oslo"
    assert asked == []


def test_a_user_tool_named_final_result_is_a_definition_error() -> None:
    def final_result(answer: str) -> str:
        return answer

    with pytest.raises(ToolDefinitionError) as info:
        Agent(ScriptedModel([]), [final_result], output_type=City)
    assert FINAL_RESULT in str(info.value)


def test_other_calls_of_the_last_turn_are_answered_too() -> None:
    ran: list[str] = []

    @tool
    def note(text: str) -> str:
        """Keep a note."""
        ran.append(text)
        return "noted"

    bad = {"name": 1}
    model = ScriptedModel(
        [tool_call_turn(("note", {"text": "x"}), (FINAL_RESULT, bad), (FINAL_RESULT, OSLO))]
    )
    result = Agent(model, [note], output_type=City).run_sync("Which city?")
    assert result.output.name == "Oslo" and ran == ["x"]
    statuses = [r.status for r in results(result.messages)]
    assert statuses == [ToolStatus.OK, ToolStatus.ERROR, ToolStatus.OK]
    check_history(result.messages)


def test_the_tool_call_limit_skips_the_other_calls_but_runs_final_result() -> None:
    """A turn past ``max_tool_calls`` runs none of its calls but the output's (the
    structured output is kept whether or not the request was the forced one)."""
    ran: list[str] = []

    @tool
    def note(text: str) -> str:
        """Keep a note."""
        ran.append(text)
        return "noted"

    model = ScriptedModel([tool_call_turn(("note", {"text": "x"}), (FINAL_RESULT, OSLO))])
    agent = Agent(model, [note], output_type=City, limits=UsageLimits(max_tool_calls=1))
    with pytest.raises(UsageLimitExceededError) as info:
        agent.run_sync("Which city?")
    assert ran == []
    statuses = {r.name: r.status for r in results(info.value.messages)}
    assert statuses == {"note": ToolStatus.NOT_EXECUTED, FINAL_RESULT: ToolStatus.OK}


def test_native_mode_on_a_model_without_one_is_the_callers_error() -> None:
    with pytest.raises(CallerError) as info:
        Agent(ScriptedModel([]), output_type=City, output_mode="native")
    assert "'scripted'" in str(info.value) and "output_mode='tool'" in str(info.value)
    with pytest.raises(CallerError):
        Agent(ScriptedModel([]), output_type=City, output_mode="json")  # type: ignore[arg-type]


def _keeping(seen: list[Any]) -> Callable[[Any], None]:
    """Keep each event; a ``PartialOutput`` as a copy (its value is the parser's live
    object). The wire's events are kept as they are: compiled, they cannot be copied."""
    return lambda e: seen.append(copy.deepcopy(e) if isinstance(e, PartialOutput) else e)


def test_partial_output_follows_the_arguments_fragment_by_fragment() -> None:
    seen: list[Any] = []
    watch = PartialWatch(OutputSpec.of(City), text=False, emit=_keeping(seen))
    watch(ToolCallStarted(0, "c1", FINAL_RESULT))
    for fragment in ['{"name": "Os', 'lo", "popu', 'lation": 7', "09000}"]:
        watch(ToolCallDelta(0, fragment))
    values = [e.value for e in seen if isinstance(e, PartialOutput)]
    assert values == [
        {"name": "Os"},
        {"name": "Oslo"},
        {"name": "Oslo"},  # a number is shown once it is whole
        OSLO,
    ]
    watch(ToolCallStarted(1, "c2", "other"))
    watch(ToolCallDelta(1, '{"a": 1}'))  # another tool's arguments are not the output
    watch(TextDelta('{"name": "x"}'))  # nor is the text, in tool mode
    assert len([e for e in seen if isinstance(e, PartialOutput)]) == 4


def test_partial_output_of_a_plain_type_is_unwrapped() -> None:
    seen: list[Any] = []
    watch = PartialWatch(OutputSpec.of(list[int]), text=False, emit=_keeping(seen))
    watch(ToolCallStarted(0, "c1", FINAL_RESULT))
    for fragment in ['{"resu', 'lt": [1, ', "2]}"]:
        watch(ToolCallDelta(0, fragment))
    assert [e.value for e in seen if isinstance(e, PartialOutput)] == [[1], [1, 2]]


def test_run_stream_yields_partial_output_events() -> None:
    model = ScriptedModel([tool_call_turn((FINAL_RESULT, OSLO), fragment=4)])

    async def main() -> list[Any]:
        events = []
        async with Agent(model, output_type=City).run_stream("Which city?") as stream:
            async for event in stream:
                events.append(event)
        return events

    events = asyncio.run(main())
    partial = [e for e in events if isinstance(e, PartialOutput)]
    assert len(partial) > 3 and partial[-1].value == OSLO
    assert events[-1].result.output == City(**OSLO)


def test_the_audit_log_records_the_output_settings(tmp_path: Any) -> None:
    import sqlite3
    from contextlib import closing

    path = tmp_path / "runs.db"
    model = ScriptedModel([tool_call_turn((FINAL_RESULT, OSLO))])
    Agent(model, output_type=City, log=path).run_sync("Which city?")
    with closing(sqlite3.connect(path)) as conn:
        (settings,) = conn.execute("SELECT settings FROM runs").fetchone()
    assert json.loads(settings)["output_type"] == "City"
    assert json.loads(settings)["output_mode"] == "tool"


def test_partial_output_in_native_mode_reads_the_answer_text() -> None:
    seen: list[Any] = []
    watch = PartialWatch(OutputSpec.of(City), text=True, emit=_keeping(seen))
    watch(ToolCallStarted(0, "c1", FINAL_RESULT))
    watch(ToolCallDelta(0, '{"name": "no"}'))  # calls are not the answer in native mode
    for fragment in ['{"na', 'me": "Oslo", ', '"population": 1}']:
        watch(TextDelta(fragment))
    values = [e.value for e in seen if isinstance(e, PartialOutput)]
    assert values == [{}, {"name": "Oslo"}, {"name": "Oslo", "population": 1}]
    watch.reset()  # the next request's answer starts afresh
    watch(TextDelta('{"name": "Bergen"}'))
    assert seen[-1].value == {"name": "Bergen"}


def test_a_long_answer_is_read_a_logarithmic_number_of_times() -> None:
    events: list[Any] = []
    watch = PartialWatch(OutputSpec.of(City), text=False, emit=events.append)
    watch(ToolCallStarted(0, "c1", FINAL_RESULT))
    watch(ToolCallDelta(0, '{"name": "'))
    for _ in range(20_000):
        watch(ToolCallDelta(0, "ab"))
    watch(ToolCallDelta(0, '", "population": 3}'))
    partial = [e for e in events if isinstance(e, PartialOutput)]
    # each read joins the string so far: reads far apart keep the total work linear
    assert len(partial) < 60
    assert partial[-1].value == {"name": "ab" * 20_000, "population": 3}


def test_tool_choice_none_with_an_output_type_is_the_callers_error() -> None:
    with pytest.raises(CallerError) as info:
        Agent(ScriptedModel([]), output_type=City, tool_choice="none")
    assert "final_result" in str(info.value)
