"""The demo's verdict judges the whole run: every expected call, in one turn or across
turns, and whether the run ended with an answer or with a call written as text."""

from __future__ import annotations

from typing import Any

from toolwire import Agent
from toolwire.demo.tools import DEMO_TOOLS
from toolwire.demo.verdict import DEMO_CASES, judge, judge_run
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

CODE, WEATHER = DEMO_CASES
BEIJING = ("get_weather", {"city": "Beijing", "day": "tomorrow"})
SHANGHAI = ("get_weather", {"city": "Shanghai", "day": "tomorrow"})


def _run(*turns: list[dict[str, Any]]) -> Any:
    agent = Agent(ScriptedModel(list(turns)), DEMO_TOOLS, max_rounds=3, tool_choice="required")
    return agent.run_sync(WEATHER.prompt).messages


def test_both_cities_in_one_turn() -> None:
    verdict = judge_run(WEATHER, _run(tool_call_turn(BEIJING, SHANGHAI), text_turn("Cloudy.")))
    assert (verdict.right_calls, verdict.in_one_turn, verdict.success) == (True, True, True)
    assert verdict.line.startswith("verdict: right calls, in one turn (parallel): round 1: ")
    assert verdict.line.endswith("; then an answer")


def test_the_second_city_in_a_second_round() -> None:
    messages = _run(tool_call_turn(BEIJING), tool_call_turn(SHANGHAI), text_turn("Cloudy."))
    verdict = judge_run(WEATHER, messages)
    assert (verdict.right_calls, verdict.turns, verdict.in_one_turn) == (True, 2, False)
    assert verdict.success and "right calls, across 2 turns: round 1: " in verdict.line
    assert "| round 2: get_weather(" in verdict.line
    # The first turn alone, judged as before, misses Shanghai.
    assert not judge(WEATHER, messages[1].tool_calls).right_calls


def test_a_city_never_asked_is_named() -> None:
    verdict = judge_run(WEATHER, _run(tool_call_turn(BEIJING), text_turn("Beijing: cloudy.")))
    assert (verdict.right_tool, verdict.all_calls, verdict.missing) == (
        True,
        False,
        ("shanghai tomorrow",),
    )
    assert "verdict: right tool, missing shanghai tomorrow (the model's choice" in verdict.line


def test_a_call_not_asked_for_is_wrong_even_with_every_city() -> None:
    paris = ("get_weather", {"city": "Hangzhou", "day": "today"})
    verdict = judge_run(WEATHER, _run(tool_call_turn(BEIJING, SHANGHAI, paris), text_turn("ok")))
    assert verdict.all_calls and not verdict.right_calls
    assert "right tool, calls not asked for" in verdict.line


def test_a_call_written_as_the_answer_is_said_to_be_one() -> None:
    written = '{"name": "get_weather", "arguments": {"city": "Shanghai", "day": "tomorrow"}}'
    verdict = judge_run(WEATHER, _run(tool_call_turn(BEIJING), text_turn(written)))
    assert verdict.call_shaped == "a JSON tool call to get_weather"
    assert not verdict.answered and not verdict.success
    assert "no answer: the last turn's text is a JSON tool call to get_weather" in verdict.line


def test_no_call_at_all_is_the_wrong_tool() -> None:
    verdict = judge_run(CODE, _run(text_turn("I cannot search.")))
    assert not verdict.right_tool and verdict.answered
    assert verdict.line == (
        "verdict: wrong tool (the model's choice, not a toolwire error): no call, text "
        "'I cannot search.'; then an answer"
    )
