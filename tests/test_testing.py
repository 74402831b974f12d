"""``ScriptedModel``: what it streams, and that any chunking gives an agent the same run.

An agent run nobody listens to asks for no per-fragment events (``deltas=False``), and
then a call whole in its chunk streams as its ``ToolCallReady`` alone (no
``ToolCallStarted``: tests/wire/test_no_deltas.py). The run loop learns of such a call
by its Ready: the tests below hold the run to the same history, the same results and the
same early starts whether each call comes whole, in fragments, paced or not, listened to
or not.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from toolwire.messages import UserMessage
from toolwire.run import Agent
from toolwire.run.model import ModelEvent, ModelRequest, TurnDone
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import tool
from toolwire.wire.events import ToolCallDelta, ToolCallReady, ToolCallStarted

CALLS = [("look", {"q": "abc"}, "c1"), ("look", {"q": "defgh"}, "c2"), ("look", {"q": "i"}, "c3")]


def _kinds(model: ScriptedModel, deltas: bool) -> list[tuple[str, int]]:
    """The call events of the model's next turn, as (class name, index)."""

    async def play() -> list[tuple[str, int]]:
        request = ModelRequest([UserMessage("go")], deltas=deltas)
        kinds = (ToolCallStarted, ToolCallDelta, ToolCallReady)
        return [
            (type(e).__name__, e.index) async for e in model.stream(request) if isinstance(e, kinds)
        ]

    return asyncio.run(play())


def test_without_deltas_a_whole_call_streams_as_its_ready_alone() -> None:
    model = ScriptedModel([tool_call_turn(*CALLS)] * 2)
    assert _kinds(model, deltas=False) == [("ToolCallReady", i) for i in range(3)]
    assert _kinds(model, deltas=True) == [
        (kind, i)
        for i in range(3)
        for kind in ("ToolCallStarted", "ToolCallDelta", "ToolCallReady")
    ]


def test_without_deltas_a_call_in_fragments_keeps_its_start() -> None:
    model = ScriptedModel([tool_call_turn(*CALLS, fragment=3)])
    assert _kinds(model, deltas=False) == [
        (kind, i) for i in range(3) for kind in ("ToolCallStarted", "ToolCallReady")
    ]


class Watched:
    """A scripted model that notes in ``log`` when each turn's stream ends."""

    def __init__(self, turns: list[list[dict[str, Any]]], log: list[str], delay: float) -> None:
        self._model = ScriptedModel(turns, chunk_delay=delay)
        self._log = log

    @property
    def name(self) -> str:
        return "watched"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for item in self._model.stream(request):
            if isinstance(item, TurnDone):
                self._log.append("end of stream")
            yield item


def _run(fragment: int, delay: float, listen: bool) -> tuple[list[Any], list[str]]:
    """A run of the three calls chunked as asked: its messages and its log."""
    log: list[str] = []

    @tool(concurrency_safe=True, side_effects=False)
    async def look(q: str) -> str:
        """Looks something up."""
        log.append(q)
        return f"found {q}"

    turns = [tool_call_turn(*CALLS, fragment=fragment), text_turn("done")]
    agent = Agent(Watched(turns, log, delay), [look])

    async def go() -> Any:
        if not listen:
            return await agent.run("go")
        stream = agent.run_stream("go")
        async for _ in stream:
            pass
        return stream.result

    result = asyncio.run(go())
    return result.messages, log


@pytest.mark.parametrize("listen", [False, True])
@pytest.mark.parametrize("delay", [0.0, 0.01])
@pytest.mark.parametrize("fragment", [0, 1, 3])
def test_any_chunking_gives_the_agent_the_same_run(
    fragment: int, delay: float, listen: bool
) -> None:
    messages, log = _run(fragment, delay, listen)
    expected, _ = _run(0, 0.0, True)  # whole calls, a listener: every call has its Started
    assert messages == expected
    # Each call ran once, between the two turns' ends at the latest.
    assert log[-1] == "end of stream"
    assert sorted(log[:-1]) == ["abc", "defgh", "end of stream", "i"]
    if delay:
        # Paced, every call (safe, harmless) starts while the stream still runs: early
        # execution, told by the Ready alone of a call that came whole unlistened to.
        assert log.index("end of stream") == 3


def test_requests_record_each_request_as_it_was_made() -> None:
    """The record is encoded when read, from what each request held when it was made: a
    history list and settings that changed since do not show, and a request made after
    a read is recorded by the next read, in the same list."""
    from toolwire.history import to_openai_chat
    from toolwire.tooldef import ToolDef

    model = ScriptedModel([text_turn("one"), text_turn("two"), text_turn("three")])
    history: list[Any] = [UserMessage("go")]
    settings: dict[str, Any] = {"temperature": 0.5}
    look = ToolDef("look", "Look a thing up.", {"type": "object", "properties": {}})

    async def ask(tool_choice: str = "auto") -> None:
        request = ModelRequest(
            history, tools=[look], tool_choice=tool_choice, settings=settings, deltas=False
        )
        async for _ in model.stream(request):
            pass

    asyncio.run(ask())
    history.append(UserMessage("more"))
    settings["temperature"] = 0.9
    asyncio.run(ask("required"))
    first, second = model.requests
    assert first["messages"] == [{"role": "user", "content": "go"}]
    assert second["messages"] == to_openai_chat(history)
    assert first["settings"] == {"temperature": 0.5}
    assert second["settings"] == {"temperature": 0.9}
    assert (first["tool_choice"], second["tool_choice"]) == ("auto", "required")
    assert first["parallel_tool_calls"] is None
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "look",
                "description": "Look a thing up.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    records = model.requests
    asyncio.run(ask())
    assert records is model.requests  # one list: a read records what came since
    assert len(records) == 3
    assert records[2]["messages"] == to_openai_chat(history)


def test_a_malformed_tool_definition_fails_the_request() -> None:
    from toolwire.errors import ToolMappingError

    model = ScriptedModel([text_turn("one")])
    request = ModelRequest([UserMessage("go")], tools=[{"type": "nope"}])  # type: ignore[list-item]
    with pytest.raises(ToolMappingError):
        model.stream(request)
    assert model.requests == []
