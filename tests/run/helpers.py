"""Shared helpers for the run tests: requests, a gated model, history checks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from toolwire.history import check_history
from toolwire.messages import AssistantMessage, Message, ToolResult
from toolwire.run.model import ModelEvent, ModelRequest, TurnDone
from toolwire.turn import ToolRequest
from toolwire.wire.openai_chat import OpenAIChatStream


def request(
    name: str, args: Any = None, *, index: int = 0, call_id: str | None = None
) -> ToolRequest:
    """A parsed request, as the assembler makes them."""
    value = {} if args is None else args
    raw = value if isinstance(value, str) else json.dumps(value)
    parsed = None if isinstance(value, str) else value
    error = "bad json" if isinstance(value, str) else None
    return ToolRequest(call_id or f"call_{index}", name, raw, parsed, error, index)


def run(coro: Awaitable[Any]) -> Any:
    """Run a coroutine in a fresh event loop."""

    async def main() -> Any:
        return await coro

    return asyncio.run(main())


Step = dict[str, Any] | Callable[[], Awaitable[None]]


class GatedModel:
    """A model whose turns mix chunks with awaited gates, for ordering tests.

    Each turn is a list of chunk dicts and zero-argument async callables; a callable
    runs (and is awaited) at that point of the stream. Records every request.
    """

    name = "gated"

    def __init__(self, turns: Sequence[Sequence[Step]]) -> None:
        self.turns = [list(t) for t in turns]
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        return self._play(self.turns[len(self.requests) - 1])

    async def _play(self, steps: list[Step]) -> AsyncIterator[ModelEvent]:
        decoder = OpenAIChatStream()
        for step in steps:
            if callable(step):
                await step()
                continue
            for event in decoder.feed(step):
                yield event
        yield TurnDone(decoder.close())


def answered_in_order(messages: Sequence[Message]) -> None:
    """Every call of every assistant message has exactly one result, in call order."""
    check_history(messages)
    for position, message in enumerate(messages):
        if not isinstance(message, AssistantMessage):
            continue
        ids = [c.id for c in message.tool_calls]
        following = messages[position + 1 : position + 1 + len(ids)]
        assert [r.call_id for r in following if isinstance(r, ToolResult)] == ids
