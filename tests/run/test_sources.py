"""Tool sources and opened toolsets in Agent(tools=[...]): opened per run, merged, refreshed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from toolwire.errors import CallerError
from toolwire.messages import ToolResult
from toolwire.run import Agent
from toolwire.run.execute import ExecutionOptions
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import Tool, Toolset, tool


@tool
def local(x: int) -> int:
    """Local."""
    return x


class Live(Toolset):
    """A toolset that gains a tool when told its list changed."""

    def __init__(self) -> None:
        super().__init__([tool(name="first")(lambda: "one")])
        self.changed = False

    async def refresh(self) -> bool:
        if not self.changed:
            return False
        self.changed = False
        self.add(tool(name="second")(lambda: "two"))
        return True


class Source:
    """Counts how often it was opened and closed."""

    def __init__(self, toolset: Toolset) -> None:
        self.toolset = toolset
        self.events: list[str] = []

    def open(self) -> AbstractAsyncContextManager[Toolset]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[Toolset]:
            self.events.append("open")
            try:
                yield self.toolset
            finally:
                self.events.append("close")

        return opened()


def test_a_source_is_opened_and_closed_around_each_run_and_refreshed_between_rounds() -> None:
    live = Live()
    source = Source(live)

    @tool
    def trigger() -> str:
        """Marks the live toolset changed."""
        live.changed = True
        return "ok"

    model = ScriptedModel(
        [tool_call_turn(("trigger", {})), tool_call_turn(("second", {})), text_turn("done")]
    )
    result = asyncio.run(Agent(model, [source, local, trigger]).run("go"))
    contents = [m.content for m in result.messages if isinstance(m, ToolResult)]
    assert contents == ["ok", "two"]
    assert source.events == ["open", "close"]
    names = [[t["function"]["name"] for t in r["tools"]] for r in model.requests]
    assert names[0] == ["local", "trigger", "first", "read_result"]
    assert names[1] == ["local", "trigger", "first", "second", "read_result"]


def test_a_name_offered_twice_is_an_error_naming_both() -> None:
    clash = Toolset([tool(name="local")(lambda: "x")])
    model = ScriptedModel([text_turn("unused")])
    with pytest.raises(CallerError, match="one from the agent's own tools, one from toolset #1"):
        asyncio.run(Agent(model, [local, clash]).run("go"))
    assert model.requests == []


def test_the_source_is_closed_when_the_run_fails() -> None:
    source = Source(Toolset())
    model = ScriptedModel([])  # no turn: the first request fails
    with pytest.raises(CallerError):
        asyncio.run(Agent(model, [source]).run("go"))
    assert source.events == ["open", "close"]


class Staging:
    """A backend that runs nothing itself and records each ``prepare``: the names it saw,
    and how many requests the model had before it (none: before the run's first)."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.prepared: list[tuple[list[str], int]] = []

    def accepts(self, tool: Tool) -> bool:
        return False

    def prepare(self, tools: Toolset) -> None:
        self.prepared.append((list(tools.names), len(self.model.requests)))

    async def invoke(self, tool: Tool, value: Any, context: Any = None) -> Any:
        raise AssertionError("accepts nothing")


@pytest.mark.parametrize("with_source", [False, True])
def test_a_backend_prepares_the_tools_before_each_runs_first_request(with_source: bool) -> None:
    # An agent without sources makes no RunTools, but asks its backend as one would:
    # once per run, before the first request, with the tools the run offers.
    model = ScriptedModel([tool_call_turn(("local", {"x": 1})), text_turn("done")] * 2)
    backend = Staging(model)
    tools: list[Any] = [local, Source(Toolset([tool(name="first")(lambda: "one")]))]
    agent = Agent(
        model,
        tools if with_source else tools[:1],
        execution=ExecutionOptions(backend=backend),
    )
    for _ in range(2):
        assert asyncio.run(agent.run("go")).output == "done"
    names = ["local", "read_result", "first"] if with_source else ["local", "read_result"]
    assert backend.prepared == [(names, 0), (names, 2)]
