"""A result short enough for its tool's cap is not handed to the result shaper.

The turn takes ``uncut`` (tool -> the longest text the shaper returns as it is) and
tests a result's length itself; a longer result, or one of a tool it does not name,
still goes to the shaper. Through the agent: a long result is still cut, a short one
is kept whole.
"""

from __future__ import annotations

from typing import Any

from toolwire import Agent
from toolwire.context import ContextPolicy
from toolwire.messages import ToolResult, ToolStatus
from toolwire.run.execute import Executor
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import Tool, tool
from toolwire.turn import ToolRequest

from .helpers import request, run


def _text_of(n: int) -> str:
    return "x" * n


async def echo(n: int) -> str:
    """Return ``n`` characters."""
    return _text_of(n)


async def other(n: int) -> str:
    """Return ``n`` characters too."""
    return _text_of(n)


def _turn(
    uncut: dict[Any, int] | None, sizes: list[tuple[str, int]]
) -> tuple[list[int], list[ToolResult]]:
    """Run one turn of calls ``(tool name, length)``; the lengths the shaper was given."""
    executor = Executor([echo, other])
    shaped: list[int] = []

    def shape(req: ToolRequest, t: Tool, content: Any) -> Any:
        shaped.append(len(content))
        return content.upper()  # visibly shaped

    if uncut is not None:
        uncut = {executor.toolset.get(name): n for name, n in uncut.items()}
    requests = [request(name, {"n": n}, index=i) for i, (name, n) in enumerate(sizes)]

    async def main() -> list[ToolResult]:
        turn = executor.turn(early=False, shape_result=shape, uncut=uncut)
        async with turn:
            await turn.finish(requests)
        return turn.results()

    return shaped, run(main())


def test_a_result_no_longer_than_its_tools_uncut_length_is_not_shaped() -> None:
    shaped, results = _turn({"echo": 10}, [("echo", 10), ("echo", 11), ("other", 3)])
    assert shaped == [11, 3]  # the 10-character one skipped; other is not in uncut
    assert [r.content for r in results] == ["x" * 10, "X" * 11, "XXX"]
    assert {r.status for r in results} == {ToolStatus.OK}


def test_without_uncut_every_result_is_shaped() -> None:
    shaped, _ = _turn(None, [("echo", 0), ("echo", 5)])
    assert shaped == [0, 5]


def test_the_agent_still_cuts_a_long_result_and_keeps_a_short_one() -> None:
    tools = [tool(echo), tool(other)]
    script = [
        tool_call_turn(("echo", {"n": 40_000}, "long"), ("other", {"n": 20}, "short")),
        text_turn("done"),
    ]
    agent = Agent(ScriptedModel(script), tools, context=ContextPolicy(max_result_tokens=100))
    result = agent.run_sync("go")
    contents = {m.call_id: m.content for m in result.messages if isinstance(m, ToolResult)}
    assert contents["short"] == "x" * 20
    assert len(contents["long"]) < 2_000 and contents["long"] != "x" * 40_000
