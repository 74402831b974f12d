"""An agent framework end to end: the OpenAI Agents SDK runs its tool because of the proxy.

The upstream is a served Qwen model whose server did not parse its tool calls: the
Hermes ``<tool_call>`` markup comes back as ``content``. Straight to that upstream the
Agents SDK takes the markup for the final answer and its tool never runs; through
``toolwire serve`` the tool runs, its result goes back, and the answer is the model's.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from openai import AsyncOpenAI

from .proxy import running_proxy
from .recorded import RecordedUpstream, Reply

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def script(body: dict[str, Any]) -> Reply:
    """The model: a call first; once the tool's result is in the history, the answer."""
    results = [m for m in body["messages"] if m.get("role") == "tool"]
    if results:
        return Reply(text=f"The weather: {results[-1]['content']}.")
    return Reply(text=CALL, pieces=4)


def run_agent(agents: Any, base_url: str, ran: list[dict[str, Any]], *, stream: bool) -> str:
    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append({"city": city})
        return f"sunny in {city}"

    client = AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0)
    model = agents.OpenAIChatCompletionsModel(
        model="Qwen/Qwen2.5-7B-Instruct", openai_client=client
    )
    agent = agents.Agent(
        name="weather", instructions="Use tools.", model=model, tools=[get_weather]
    )

    async def go() -> str:
        try:
            if stream:
                result = agents.Runner.run_streamed(agent, "Weather in Paris?")
                async for _ in result.stream_events():
                    pass
            else:
                result = await agents.Runner.run(agent, "Weather in Paris?")
            return str(result.final_output)
        finally:
            await client.close()

    return asyncio.run(go())


@pytest.fixture
def agents() -> Any:
    """The Agents SDK, imported by the test that uses it, not when the file is collected:
    importing it takes ~3.5 s of CPU, which every pytest process that collects this file
    paid, and every worker but one for nothing (the two ways of running are one test, so
    one worker imports it)."""
    sdk = pytest.importorskip("agents")
    sdk.set_tracing_disabled(True)  # the SDK would export traces to OpenAI
    return sdk


def test_the_tool_runs_through_the_proxy_and_not_without_it(agents: Any) -> None:
    for stream in (False, True):  # Runner.run, then Runner.run_streamed
        check_through_the_proxy(agents, stream=stream)


def check_through_the_proxy(agents: Any, *, stream: bool) -> None:
    """Straight to the upstream the markup is the answer; through the proxy the tool runs."""
    with RecordedUpstream(script) as upstream:
        bare: list[dict[str, Any]] = []
        output = run_agent(agents, upstream.url, bare, stream=stream)
        assert bare == [] and "<tool_call>" in output  # the call is left in the answer

        ran: list[dict[str, Any]] = []
        with running_proxy(upstream.url) as url:
            output = run_agent(agents, url, ran, stream=stream)
        assert ran == [{"city": "Paris"}]
        assert output == "The weather: sunny in Paris."
        # the history the framework sent back holds the call as a call, with its result
        last = upstream.requests[-1]["messages"]
        (call,) = [
            c for m in last if m.get("role") == "assistant" for c in m.get("tool_calls") or []
        ]
        assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
        assert [m["tool_call_id"] for m in last if m.get("role") == "tool"] == [call["id"]]
