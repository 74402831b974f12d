"""ScriptedModel and the chunk builders of toolwire.testing."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.errors import CallerError, HistoryError
from toolwire.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from toolwire.run.model import Model, ModelRequest, TurnDone
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.wire.events import TextDelta, ToolCallReady

from .helpers import run


async def _collect(model: ScriptedModel, request: ModelRequest) -> list[Any]:
    return [item async for item in model.stream(request)]


def test_streams_through_the_real_decoder_and_records_requests() -> None:
    model = ScriptedModel(
        [tool_call_turn(("f", {"x": 1}, "id1"), fragment=2), text_turn("hello", pieces=5)]
    )
    assert isinstance(model, Model) and model.name == "scripted"
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    first = run(
        _collect(model, ModelRequest([UserMessage("hi")], tools, "required", True, {"seed": 1}))
    )
    assert isinstance(first[-1], TurnDone)
    ready = [e for e in first if isinstance(e, ToolCallReady)]
    assert [(e.call.id, e.call.arguments) for e in ready] == [("id1", '{"x": 1}')]
    second = run(_collect(model, ModelRequest([UserMessage("again")])))
    assert "".join(e.text for e in second if isinstance(e, TextDelta)) == "hello"
    assert second[-1].turn.text == "hello"
    assert model.requests[0] == {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": tools,
        "tool_choice": "required",
        "parallel_tool_calls": True,
        "settings": {"seed": 1},
    }
    assert model.remaining == 0


def test_running_out_of_turns_is_a_clear_error() -> None:
    model = ScriptedModel([text_turn("only one")])
    run(_collect(model, ModelRequest([UserMessage("1")])))
    with pytest.raises(CallerError, match="ran out of turns: request 2 was made, but only 1"):
        run(_collect(model, ModelRequest([UserMessage("2")])))


def test_chunk_delay_paces_the_stream() -> None:
    slept: list[float] = []
    model = ScriptedModel([text_turn("abc", pieces=3)], chunk_delay=0.001)
    import toolwire.testing as testing

    original = testing.asyncio.sleep

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    testing.asyncio.sleep = fake_sleep  # type: ignore[assignment]
    try:
        run(_collect(model, ModelRequest([UserMessage("x")])))
    finally:
        testing.asyncio.sleep = original  # type: ignore[assignment]
    assert slept == [0.001] * 4  # between the 5 chunks: role, a, b, c, finish


def test_generated_ids_never_repeat() -> None:
    ids = [
        tool_call_turn(("f", {}))[1]["choices"][0]["delta"]["tool_calls"][0]["id"] for _ in range(3)
    ]
    assert len(set(ids)) == 3


@pytest.mark.parametrize(("turns", "delay"), [("abc", 0.0), ([["x"], "y"], 0.0), ([], -1)])
def test_bad_arguments(turns: Any, delay: Any) -> None:
    with pytest.raises(CallerError):
        ScriptedModel(turns, chunk_delay=delay)


def test_a_request_checks_its_history_when_built() -> None:
    """The history check is the request's, not the model's (``Model``'s docstring): a
    broken history never reaches any model, a scripted one included."""
    dangling = [
        UserMessage("hi"),
        AssistantMessage([ToolCall("c1", "f", "{}")]),
        UserMessage("and?"),
    ]
    with pytest.raises(HistoryError, match="c1"):
        ModelRequest(dangling)
    answered = [*dangling[:2], ToolResult("c1", "f", "ok"), dangling[2]]
    assert ModelRequest(answered).messages == answered
