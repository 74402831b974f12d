"""Agent's options in groups (run/options.py): the same options as the keywords."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolwire
from toolwire import (
    Agent,
    CallerError,
    LoopPolicy,
    ObserveOptions,
    Permissions,
    RequestOptions,
    SafetyOptions,
    StopOptions,
    UsageLimits,
)
from toolwire.messages import ToolResult, ToolStatus
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn


@toolwire.tool
def echo(text: str) -> str:
    """Say it back."""
    return text


def _model() -> ScriptedModel:
    return ScriptedModel([text_turn("done")])


def test_a_group_sets_what_its_keywords_set() -> None:
    limits = UsageLimits(max_requests=3)
    agent = Agent(
        _model(),
        [echo],
        request=RequestOptions(
            tool_choice="required", parallel_tool_calls=False, settings={"max_tokens": 9}
        ),
        stop=StopOptions(max_rounds=2, on_max_rounds="raise", limits=limits),
    )
    assert (agent.tool_choice, agent.parallel_tool_calls, agent.settings) == (
        "required",
        False,
        {"max_tokens": 9},
    )
    assert (agent.max_rounds, agent.on_max_rounds, agent.limits) == (2, "raise", limits)
    keywords = Agent(_model(), [echo], tool_choice="required", max_rounds=2)
    assert (keywords.tool_choice, keywords.max_rounds) == ("required", 2)


def test_a_group_left_at_its_defaults_keeps_the_keywords() -> None:
    loops = LoopPolicy()
    agent = Agent(_model(), [echo], max_rounds=7, stop=StopOptions(loop_policy=loops))
    assert (agent.max_rounds, agent.loop_policy) == (7, loops)


def test_one_option_given_twice_must_agree() -> None:
    assert Agent(_model(), [echo], max_rounds=4, stop=StopOptions(max_rounds=4)).max_rounds == 4
    with pytest.raises(CallerError, match="max_rounds was given twice"):
        Agent(_model(), [echo], max_rounds=3, stop=StopOptions(max_rounds=4))


def test_a_group_is_checked_like_its_keywords() -> None:
    with pytest.raises(CallerError, match="max_rounds"):
        Agent(_model(), [echo], stop=StopOptions(max_rounds="many"))  # type: ignore[arg-type]
    with pytest.raises(CallerError, match="stop= must be a StopOptions"):
        Agent(_model(), [echo], stop={"max_rounds": 3})  # type: ignore[arg-type]


def test_safety_options_deny_like_the_keywords() -> None:
    model = ScriptedModel([tool_call_turn(("echo", {"text": "hi"})), text_turn("done")])
    safety = SafetyOptions(permissions=Permissions(deny=["echo"]))
    result = Agent(model, [echo], safety=safety).run_sync("go")
    [answer] = [m for m in result.messages if isinstance(m, ToolResult)]
    assert answer.status is ToolStatus.DENIED


def test_observe_options_log_the_run(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    result = Agent(_model(), [], observe=ObserveOptions(log=path)).run_sync("go")
    with toolwire.AuditLog(path) as log:
        assert [r["run_id"] for r in log.runs()] == [result.run_id]
