"""Shared helpers for the run tests: requests, a gated model, history checks."""

from __future__ import annotations

import asyncio
import json
import selectors
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import pytest

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


class _FakeSelector:
    """A selector that, instead of sleeping until the next timer, moves the clock there.

    I/O and thread wake-ups (``call_soon_threadsafe``) still arrive: a ready selector
    is returned at once, and with no timer pending it blocks for real.
    """

    def __init__(self, loop: FakeClockLoop, selector: selectors.BaseSelector) -> None:
        self._loop = loop
        self._selector = selector

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = self._selector.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            return self._selector.select(None)
        for event in self._loop.before_time_passes:
            event.wait(10)  # e.g. "the tool's thread has started": then time may pass
        ready = self._selector.select(0)
        if ready:
            return ready
        self._loop.now += timeout
        return []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._selector, name)


class FakeClockLoop(asyncio.SelectorEventLoop):
    """An event loop on a fake clock: a timeout passes as soon as nothing else can run.

    Timeout tests run instantly and deterministically (trio's ``MockClock`` idea): a
    tool blocked on an event until the test sets it is, for this loop, blocked forever.
    """

    def __init__(self, before_time_passes: Sequence[threading.Event] = ()) -> None:
        self.now = 0.0
        self.before_time_passes = before_time_passes
        selector = selectors.DefaultSelector()
        super().__init__(_FakeSelector(self, selector))  # type: ignore[arg-type]

    def time(self) -> float:
        return self.now


def run_fake_clock(
    coro: Awaitable[Any], *, before_time_passes: Sequence[threading.Event] = ()
) -> Any:
    """Run a coroutine on a fresh :class:`FakeClockLoop` (as ``asyncio.run`` would); the
    clock moves only once every event in ``before_time_passes`` is set."""
    if sys.version_info < (3, 11):  # pragma: no cover
        # Close it first: a coroutine collected unawaited warns, and warnings are errors
        # (in whichever later test the collection happens).
        close = getattr(coro, "close", None)
        if close is not None:
            close()
        pytest.skip("asyncio.Runner(loop_factory=...) needs Python 3.11")

    async def main() -> Any:
        return await coro

    with asyncio.Runner(loop_factory=lambda: FakeClockLoop(before_time_passes)) as runner:
        return runner.run(main())
