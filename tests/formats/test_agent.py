"""The agent loop over a text format: retracted early calls, broken calls as feedback,
recovered arguments under the repair policy.

The model here is a real ``Model``: raw text pieces go through ``TextTurnDecoder`` (the
decoder the raw-completion and local providers use), with awaited gates between pieces
so the test decides what the agent has seen when.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from toolwire import formats
from toolwire.formats import TextTurnDecoder
from toolwire.messages import ToolStatus, UserMessage
from toolwire.run import Agent
from toolwire.run.events import CallDiscarded
from toolwire.run.model import ModelEvent, ModelRequest, TurnDone
from toolwire.tools import tool
from toolwire.wire.events import ToolCallRetracted

Step = str | Callable[[], Awaitable[None]]


class TextModel:
    """Streams scripted raw output through a format, one turn per request."""

    name = "text"

    def __init__(self, family: str, variant: str, turns: Sequence[Sequence[Step]]) -> None:
        self.fmt = formats.get(family, variant)
        self.turns = [list(t) for t in turns]
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        return self._play(self.turns[len(self.requests) - 1])

    async def _play(self, steps: list[Step]) -> AsyncIterator[ModelEvent]:
        decoder = TextTurnDecoder(self.fmt, id_prefix=f"t{len(self.requests)}_")
        for step in steps:
            if callable(step):
                await step()
                continue
            for event in decoder.feed(step):
                yield event
        for event in decoder.end("stop"):
            yield event
        yield TurnDone(decoder.close())


def _run(coro: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coro

    return asyncio.run(main())


def test_an_early_started_call_that_is_retracted_is_cancelled_and_recorded() -> None:
    async def body() -> tuple[list[Any], Any, list[str]]:
        log: list[str] = []
        started = asyncio.Event()

        @tool(concurrency_safe=True, side_effects=False)  # harmless: may start early
        async def look(key: str) -> str:
            """Read-only, slow."""
            log.append(f"look {key}")
            started.set()
            await asyncio.Event().wait()  # runs until cancelled
            return key

        async def tool_started() -> None:
            await asyncio.wait_for(started.wait(), 5)

        model = TextModel(
            "hermes",
            "qwen2.5",
            [
                [
                    '<tool_call>\n{"name": "look", "arguments": {"key": "1"}',
                    tool_started,  # the arguments closed: look started early
                    " and then the model rambles instead of closing the object",
                ],
                ["Fine, done."],
            ],
        )
        stream = Agent(model, [look]).run_stream("go")
        events = [event async for event in stream]
        return events, stream.result, log

    events, result, log = _run(body())
    assert log == ["look 1"]
    assert any(isinstance(e, ToolCallRetracted) and e.index == 0 for e in events)
    discarded = [e for e in events if isinstance(e, CallDiscarded)]
    assert [(d.call_id, d.name) for d in discarded] == [("t1_0", "look")]
    assert "retracted" in discarded[0].reason
    assert [(d.call_id, d.name) for d in result.discarded] == [("t1_0", "look")]
    # The broken call went back to the model as feedback, and the run went on.
    feedback = [m for m in result.messages if isinstance(m, UserMessage)][-1]
    assert "could not be read" in feedback.content and "hermes" in feedback.content
    assert result.output == "Fine, done."
    assert not any(m.tool_calls for m in result.messages if hasattr(m, "tool_calls"))


def test_a_cut_off_call_is_fed_back_and_retried() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return f"sunny in {city}"

    model = TextModel(
        "hermes",
        "qwen2.5",
        [
            ['<tool_call>\n{"name": "get_weather", "arguments": {"ci'],
            ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'],
            ["It is sunny."],
        ],
    )
    result = _run(Agent(model, [get_weather]).run("weather?"))
    assert result.output == "It is sunny."
    sent_back = model.requests[1].messages[-1]
    assert isinstance(sent_back, UserMessage) and "truncated" not in sent_back.content
    assert "ended inside a tool call" in sent_back.content
    assert result.tool_calls == 1


def test_recovered_arguments_follow_the_repair_policy() -> None:
    ran: list[str] = []

    @tool(side_effects=True)
    def delete(path: str) -> str:
        """Deletes a file."""
        ran.append(path)
        return "deleted"

    @tool(side_effects=False)
    def read(path: str) -> str:
        """Reads a file."""
        ran.append(f"read {path}")
        return "content"

    recovered = "<tool_call>\n<function={name}>\n<parameter=path>\na.txt\n</function>\n</tool_call>"
    model = TextModel(
        "qwen3_coder",
        "qwen3-coder",
        [
            [recovered.format(name="delete")],
            [recovered.format(name="read")],
            ["ok"],
        ],
    )
    result = _run(Agent(model, [delete, read]).run("go"))
    assert ran == ["read a.txt"]  # the side-effecting tool did not run on a guess
    statuses = [m.status for m in result.messages if hasattr(m, "status")]
    assert statuses[0] is not ToolStatus.OK and statuses[1] is ToolStatus.OK
