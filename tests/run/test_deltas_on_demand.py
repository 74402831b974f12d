"""Per-fragment events only when something listens (issue 30).

An agent run nobody streams or observes asks its model for no ``ToolCallDelta``
(``ModelRequest.deltas=False``); a stream consumer or a hook gets them as before. The
history and the results are the same either way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from toolwire.run import Agent
from toolwire.run.model import ModelEvent, ModelRequest
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import tool
from toolwire.wire.events import ToolCallDelta

from .helpers import run


@tool(concurrency_safe=True, side_effects=False)
async def look(q: str) -> str:
    """Looks something up."""
    return f"found {q}"


class Recording:
    """A scripted model that records each request's ``deltas`` and the deltas it sent."""

    def __init__(self) -> None:
        script = [tool_call_turn(("look", {"q": "abcdefgh"}, "c1"), fragment=3), text_turn("ok")]
        self._model = ScriptedModel(script)
        self.asked: list[bool] = []
        self.sent = 0

    @property
    def name(self) -> str:
        return "recording"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.asked.append(request.deltas)
        async for item in self._model.stream(request):
            self.sent += isinstance(item, ToolCallDelta)
            yield item


def test_a_run_nobody_listens_to_asks_for_no_deltas() -> None:
    model = Recording()
    result = run(Agent(model, [look]).run("go"))
    assert model.asked == [False, False] and model.sent == 0
    assert result.messages[-2].content == "found abcdefgh"


def test_a_stream_consumer_gets_the_deltas_and_the_same_history() -> None:
    quiet = run(Agent(Recording(), [look]).run("go"))
    model = Recording()

    async def consume() -> tuple[list[Any], Any]:
        stream = Agent(model, [look]).run_stream("go")
        events = [event async for event in stream]
        return events, stream.result

    events, result = run(consume())
    assert model.asked == [True, True] and model.sent > 1
    assert sum(isinstance(e, ToolCallDelta) for e in events) == model.sent
    assert result.messages == quiet.messages


class Hook:
    """A run hook (``Agent(log=...)`` takes any): its listener keeps every event."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def begin(self, start: Any) -> Any:
        return self.seen.append


def test_a_hook_counts_as_a_listener() -> None:
    hook = Hook()
    model = Recording()
    run(Agent(model, [look], log=hook).run("go"))
    seen = hook.seen
    assert model.asked == [True, True]
    assert any(isinstance(e, ToolCallDelta) for e in seen)
