"""Shared fixtures of the provider tests: recorded streams, a retry-sleep recorder, a runner."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from toolwire.demo import recorded_stream
from toolwire.messages import SystemMessage, UserMessage
from toolwire.run.model import Model, ModelEvent, ModelRequest, TurnDone
from toolwire.turn import Turn


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "local: needs llama-cpp-python and the shipped SmolLM2 model"
    )


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No provider keys in the environment."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    yield


class SleepRecorder:
    """Stands in for ``anyio.sleep`` between retries: records the delays, waits 0 s."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await anyio.sleep(0)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


def demo_request(*, only: str | None = None, **kwargs: Any) -> ModelRequest:
    """A small request with the demo tools' definitions (``only``: that one tool's, a
    shorter prompt where a test needs no choice between tools)."""
    from toolwire.demo.tools import DEMO_TOOLS

    tools = [tool.definition() for tool in DEMO_TOOLS]
    return ModelRequest(
        [SystemMessage("Be brief."), UserMessage('Search "login" and "session".')],
        tools=[tool for tool in tools if only in (None, tool.name)],
        **kwargs,
    )


async def collect(model: Model, request: ModelRequest) -> tuple[list[ModelEvent], Turn]:
    """Every event of one streamed turn, and its Turn."""
    events: list[ModelEvent] = []
    async for item in model.stream(request):
        events.append(item)
    last = events[-1]
    assert isinstance(last, TurnDone)
    assert sum(isinstance(item, TurnDone) for item in events) == 1
    return events[:-1], last.turn


def run(model: Model, request: ModelRequest) -> tuple[list[ModelEvent], Turn]:
    """``collect`` on a fresh event loop."""
    return anyio.run(collect, model, request)


__all__ = ["SleepRecorder", "collect", "demo_request", "recorded_stream", "run"]
