"""Structured output against real loopback HTTP servers: tool mode on a hosted and an
open-weight (raw completions) model, and each provider's native mode."""

from __future__ import annotations

import json
from typing import Any, Literal

import pydantic
import pytest

from toolwire import Agent, CallerError, tool
from toolwire.output import FINAL_RESULT
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.completions import CompletionsModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.openai_responses import OpenAIResponsesModel
from toolwire.run.model import ModelRequest
from toolwire.testing import text_turn, tool_call_turn
from toolwire.tooldef import OutputFormat

from ..providers.faultserver import FaultServer, json_reply, sse


class City(pydantic.BaseModel):
    name: str
    population: int


class Node(pydantic.BaseModel):
    value: int
    children: list[Node] = []


class Cat(pydantic.BaseModel):
    kind: Literal["cat"]


class Dog(pydantic.BaseModel):
    kind: Literal["dog"]


class Pet(pydantic.BaseModel):
    pet: Cat | Dog = pydantic.Field(discriminator="kind")


OSLO = {"name": "Oslo", "population": 709000}


def chat_sse(chunks: list[dict[str, Any]]) -> bytes:
    """Chat chunks (``toolwire.testing``) as the SSE body a server sends."""
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def anthropic_sse(name: str, arguments: str) -> bytes:
    """An Anthropic Messages stream with one tool_use block of ``name``."""
    events = [
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "type": "message",
         "role": "assistant", "model": "claude", "content": [], "stop_reason": None,
         "usage": {"input_tokens": 9, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block":
         {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}}),
        *(
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": arguments[i : i + 7]}})
            for i in range(0, len(arguments), 7)
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return "709000 people"


def test_tool_mode_over_openai_chat() -> None:
    bad = chat_sse(tool_call_turn((FINAL_RESULT, {"name": "Oslo", "population": "many"})))
    good = chat_sse(tool_call_turn((FINAL_RESULT, OSLO), fragment=5))
    with FaultServer(sse(bad), sse(good)) as server:
        model = OpenAIChatModel("m", base_url=f"{server.url}/v1", api_key="k")
        result = Agent(model, [lookup], output_type=City).run_sync("Which city?")
        sent = [r.body for r in server.requests]
    assert result.output == City(**OSLO)
    assert [t["function"]["name"] for t in sent[0]["tools"]][:2] == ["lookup", FINAL_RESULT]
    assert "response_format" not in sent[0]
    feedback = next(m for m in sent[1]["messages"] if m["role"] == "tool")["content"]
    assert "`population`" in feedback


def test_tool_mode_with_an_open_weight_text_format() -> None:
    markup = '<tool_call>\n{"name": "final_result", "arguments": {"result": [3, 4]}}\n</tool_call>'
    body = {
        "choices": [{"index": 0, "text": markup, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    with FaultServer(json_reply(body)) as server:
        model = CompletionsModel(
            "Qwen/Qwen2.5-7B-Instruct", base_url=f"{server.url}/v1", api_key="k"
        )
        agent = Agent(model, output_type=list[int], settings={"stream": False})
        result = agent.run_sync("Two numbers?")
        prompt = server.requests[0].body["prompt"]
    assert result.output == [3, 4]
    assert '"name": "final_result"' in prompt  # offered in the family's own tool format


def test_native_mode_on_openai_chat_sends_response_format() -> None:
    broken = chat_sse(text_turn('{"name": "Oslo"}'))
    good = chat_sse(text_turn(json.dumps(OSLO), pieces=4))
    with FaultServer(sse(broken), sse(good)) as server:
        model = OpenAIChatModel("m", base_url=f"{server.url}/v1", api_key="k")
        result = Agent(model, output_type=City, output_mode="native").run_sync("Which city?")
        sent = [r.body for r in server.requests]
    assert result.output == City(**OSLO)
    fmt = sent[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert "tools" not in sent[0]  # no final_result tool in native JSON mode
    feedback = sent[1]["messages"][-1]
    assert feedback["role"] == "user" and "population" in feedback["content"]
    assert result.diagnostics.counts == {"schema_violation": 1}


def test_native_mode_on_openai_responses_sends_text_format() -> None:
    model = OpenAIResponsesModel("m", base_url="http://h/v1", api_key="k")
    output = OutputFormat(FINAL_RESULT, {"type": "object", "properties": {}})
    body = model.build_request(ModelRequest([], output=output)).body
    assert body["text"] == {
        "format": {
            "type": "json_schema",
            "name": FINAL_RESULT,
            "schema": {"type": "object", "properties": {}},
            "strict": True,
        }
    }


@pytest.mark.parametrize(
    ("tools", "choice"),
    [([], {"type": "tool", "name": FINAL_RESULT}), ([lookup], {"type": "any"})],
)
def test_native_mode_on_anthropic_forces_a_tool_call(
    tools: list[Any], choice: dict[str, str]
) -> None:
    with FaultServer(sse(anthropic_sse(FINAL_RESULT, json.dumps(OSLO)))) as server:
        model = AnthropicModel("claude", base_url=server.url, api_key="k")
        agent = Agent(model, tools, output_type=City, output_mode="native")
        result = agent.run_sync("Which city?")
        sent = server.requests[0].body
    assert result.output == City(**OSLO)
    assert sent["tool_choice"] == choice
    assert FINAL_RESULT in [t["name"] for t in sent["tools"]]


def test_a_schema_a_native_mode_refuses_is_the_callers_error() -> None:
    anthropic = AnthropicModel("claude", base_url="http://h", api_key="k")
    with pytest.raises(CallerError) as info:
        Agent(anthropic, output_type=Node, output_mode="native")
    assert "anthropic:claude" in str(info.value) and "recursive" in str(info.value)
    Agent(anthropic, output_type=Node)  # tool mode takes it

    openai = OpenAIChatModel("m", base_url="http://h/v1", api_key="k")
    with pytest.raises(CallerError) as info:
        Agent(openai, output_type=Pet, output_mode="native")
    assert "openai:m" in str(info.value) and "oneOf" in str(info.value)
