"""A finished run leaves no reference cycles behind.

Its turns' calls, tasks, validations and results, and its context's request records,
are freed by their reference counts once the run's result is dropped. A cycle through
the turn (its runner kept the turn's ``position`` method) or through the run's context
(each request record counted its tokens with a closure over the context) left about
nine objects a call to the garbage collector: a collection a run at a hundred calls,
on top of the ones a run's live objects trigger.
"""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from typing import Any

import pytest

from toolwire import Agent, ContextPolicy, ToolContext, tool
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

CALLS = 6


async def _plain(i: int) -> str:
    return "ok"


async def _with_context(i: int, context: ToolContext) -> str:
    return context.idempotency_key


async def _raises(i: int) -> str:
    raise ValueError("no")


def _agent(body: Any, *, early: bool, policy: ContextPolicy | None) -> Agent:
    tools = []
    for k in range(CALLS):
        fn = tool(body, name=f"t{k}", concurrency_safe=True, side_effects=not early)
        tools.append(fn)
    return Agent(ScriptedModel([]), tools, context=policy)


def _script() -> list[Any]:
    calls = [(f"t{k}", {"i": k}, f"c{k}") for k in range(CALLS)]
    return [tool_call_turn(*calls), text_turn("done")]


def _cyclic_garbage(agent: Agent) -> Counter[str]:
    """The objects a second run of ``agent`` left in reference cycles, by type."""

    async def runs() -> Counter[str]:
        agent.model = ScriptedModel(_script())
        await agent.run("go")  # first-run caches are not the run's garbage
        # The youngest generation only (a full collection of the test process takes a
        # second): with collections off, everything the run makes stays in it.
        gc.collect(0)
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            agent.model = ScriptedModel(_script())
            result = await agent.run("go")
            assert result.output == "done"
            del result  # the caller drops the run
            gc.collect(0)
            return Counter(type(o).__qualname__ for o in gc.garbage)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()

    return asyncio.run(runs())


@pytest.mark.parametrize("early", [True, False], ids=["early-starts", "after-the-stream"])
@pytest.mark.parametrize("policy", [None, ContextPolicy(max_result_tokens=None)])
@pytest.mark.parametrize(
    "body", [_plain, _with_context, _raises], ids=["plain", "tool-context", "raises"]
)
def test_a_finished_run_leaves_no_cycles(
    body: Any, early: bool, policy: ContextPolicy | None
) -> None:
    assert _cyclic_garbage(_agent(body, early=early, policy=policy)) == Counter()


def test_the_check_sees_a_cycle() -> None:
    """The check can fail: a tool that leaves a cycle is caught."""

    async def cyclic(i: int) -> str:
        loop: list[Any] = []
        loop.append(loop)
        return "ok"

    garbage = _cyclic_garbage(_agent(cyclic, early=True, policy=None))
    assert garbage["list"] >= CALLS
