"""Chat dialects over loopback HTTP: what a DeepSeek conversation sends back.

The model's side is DeepSeek's own recorded traffic (``deepseek-reasoner``, thinking
mode with a tool call; tests/wire/fixtures/recorded, sources and licences in its
README); the agent, the provider and the HTTP client are the real ones. The rules are
DeepSeek's documented ones:

* thinking mode, https://api-docs.deepseek.com/guides/thinking_mode ("Tool Calls"):
  the ``reasoning_content`` of every assistant message between two user messages where
  the model called a tool goes back in every later request; where it called none, the
  API ignores it (left out);
* the original ``deepseek-reasoner`` (R1), https://api-docs.deepseek.com/guides/reasoning_model:
  ``reasoning_content`` in the input messages is a 400 error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent
from toolwire.errors import CallerError
from toolwire.history import ChatDialect
from toolwire.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.run.model import ModelRequest

from .faultserver import FaultServer, sse

RECORDED = Path(__file__).parent.parent / "wire" / "fixtures" / "recorded"


def _sse(name: str) -> bytes:
    lines = filter(None, (RECORDED / f"chat-deepseek-{name}.chunks.txt").read_text().splitlines())
    return "".join(f"data: {line}\n\n" for line in lines).encode() + b"data: [DONE]\n\n"


def _reasoning(name: str) -> str:
    """The recorded stream's reasoning, joined from its deltas without toolwire."""
    text = (RECORDED / f"chat-deepseek-{name}.chunks.txt").read_text()
    deltas = [json.loads(line)["choices"][0]["delta"] for line in text.splitlines() if line]
    return "".join(d.get("reasoning_content") or "" for d in deltas)


def weather(location: str) -> str:
    """The weather in a city."""
    return f"Sunny in {location}."


def _assistants(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


def test_deepseek_sends_back_the_reasoning_of_tool_call_turns_only(no_keys: None) -> None:
    tool_call, answer = _reasoning("tool-call"), _reasoning("reasoning")
    replies = [sse(_sse("tool-call")), sse(_sse("reasoning")), sse(_sse("reasoning"))]
    with FaultServer(*replies, sse(_sse("reasoning"))) as server:
        model = OpenAIChatModel(
            "deepseek-reasoner", base_url=f"{server.url}/v1", api_key="k", dialect="deepseek"
        )
        agent = Agent(model, [weather])
        first = agent.run_sync("What is the weather in San Francisco?")
        second = agent.run_sync("How many r's in strawberry?", history=first.messages)
        agent.run_sync("And in raspberry?", history=second.messages)
        bodies = [seen.body for seen in server.requests]
    assert len(bodies) == 4
    # Within the tool-call turn: the call's reasoning goes back with the call.
    (call,) = _assistants(bodies[1])
    assert call["tool_calls"][0]["function"]["name"] == "weather"
    assert call["reasoning_content"] == tool_call and tool_call
    # In every later request, every assistant message of that turn keeps its reasoning.
    for body in bodies[2:]:
        kept = _assistants(body)
        assert kept[0]["reasoning_content"] == tool_call
        assert kept[1]["reasoning_content"] == answer and "tool_calls" not in kept[1]
    # The second user turn made no tool call: its reasoning is not sent back.
    assert len(_assistants(bodies[3])) == 3
    assert "reasoning_content" not in _assistants(bodies[3])[2]


def test_deepseek_r1_never_sends_reasoning_back(no_keys: None) -> None:
    with FaultServer(sse(_sse("reasoning"))) as server:
        model = OpenAIChatModel(
            "deepseek-reasoner", base_url=f"{server.url}/v1", api_key="k", dialect="deepseek-r1"
        )
        agent = Agent(model)
        first = agent.run_sync("How many r's in strawberry?")
        assert first.messages[-1].reasoning  # type: ignore[union-attr]
        agent.run_sync("And in raspberry?", history=first.messages)
        body = server.requests[1].body
    (assistant,) = _assistants(body)
    assert "reasoning_content" not in assistant
    assert assistant["content"].startswith("The word")


def test_other_servers_get_all_reasoning_back(no_keys: None) -> None:
    """The default dialect: vLLM and SGLang read every assistant message's reasoning."""
    with FaultServer(sse(_sse("reasoning"))) as server:
        agent = Agent(OpenAIChatModel("Qwen/Qwen3-8B", base_url=f"{server.url}/v1"))
        first = agent.run_sync("How many r's in strawberry?")
        agent.run_sync("And in raspberry?", history=first.messages)
        (assistant,) = _assistants(server.requests[1].body)
    assert assistant["reasoning_content"] == _reasoning("reasoning")


def _history() -> list[Any]:
    # A request is a checked history (ModelRequest): the call has its result.
    call = ToolCall("call_1", "weather", '{"location": "Paris"}')
    return [UserMessage("q"), AssistantMessage([call]), ToolResult("call_1", "weather", "sunny")]


@pytest.mark.parametrize(
    ("base_url", "dialect"),
    [
        ("https://api.deepseek.com", "deepseek"),
        ("https://api.deepseek.com/v1/", "deepseek"),
        ("http://localhost:8000/v1", "openai"),
        ("https://openrouter.ai/api/v1", "openai"),
    ],
)
def test_the_dialect_follows_the_endpoint(no_keys: None, base_url: str, dialect: str) -> None:
    model = OpenAIChatModel("deepseek-reasoner", base_url=base_url, api_key="k")
    assert model.dialect.name == dialect
    (_, assistant, _) = model.build_request(ModelRequest(_history())).body["messages"]
    # DeepSeek: a tool-call message without reasoning still sends the field, empty.
    assert assistant.get("reasoning_content") == ("" if dialect == "deepseek" else None)


def test_a_dialect_of_ones_own_and_a_wrong_name(no_keys: None) -> None:
    mine = ChatDialect("my-server", reasoning_echo="never")
    model = OpenAIChatModel("m", base_url="http://h/v1", dialect=mine)
    assert model.dialect is mine
    with pytest.raises(CallerError) as info:
        OpenAIChatModel("m", base_url="http://h/v1", dialect="deepsek")
    assert "deepsek" in str(info.value) and "deepseek" in str(info.value.hint)
