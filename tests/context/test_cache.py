"""Prompt-cache layout: Anthropic breakpoints, OpenAI prompt_cache_key, a stable prefix."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings

from toolwire import Agent, ContextPolicy, SystemMessage, UserMessage
from toolwire.context.cache import anthropic_breakpoints
from toolwire.history import to_anthropic, to_anthropic_tools
from toolwire.messages import Message
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.openai_responses import OpenAIResponsesModel
from toolwire.run.model import ModelRequest
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from ..helpers import sdk
from ..history.strategies import WILD, histories

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": n,
            "description": n,
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for n in ("alpha", "beta")
]


def conforms(kind: Any, data: Any) -> None:
    sdk.conforms(kind, data)
    json.dumps(data)  # and stays plain JSON


def marks(body: dict[str, Any]) -> int:
    return json.dumps(body).count('"cache_control"')


@settings(max_examples=150, deadline=None)
@given(histories(WILD))
def test_breakpoints_stay_within_four_and_the_body_stays_valid(
    anthropic_types: Any, history: list[Message]
) -> None:
    system, messages = to_anthropic([SystemMessage("Be brief."), *history])
    body: dict[str, Any] = {
        "system": system,
        "messages": messages,
        "tools": to_anthropic_tools(TOOLS),
    }
    count = anthropic_breakpoints(body)
    assert count == marks(body) <= 4
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    conforms(list[anthropic_types.MessageParam], body["messages"])
    conforms(list[anthropic_types.TextBlockParam], body["system"])
    conforms(list[anthropic_types.ToolParam], body["tools"])


def test_breakpoints_mark_the_newest_message_and_the_previous_prompt() -> None:
    body: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": [{"type": "text", "text": "two"}]},
            {"role": "user", "content": [{"type": "text", "text": "three"}]},
        ]
    }
    assert anthropic_breakpoints(body) == 2
    assert body["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][2]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_breakpoints_the_caller_set_count_toward_four() -> None:
    ephemeral = {"type": "ephemeral"}
    body: dict[str, Any] = {
        "system": [{"type": "text", "text": "s", "cache_control": ephemeral}],
        "tools": [{"name": "t", "input_schema": {"type": "object"}, "cache_control": ephemeral}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "a", "cache_control": ephemeral}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
            {"role": "user", "content": [{"type": "text", "text": "c"}]},
        ],
    }
    assert anthropic_breakpoints(body) == 4 == marks(body)


def request(cache_key: str | None, **settings: Any) -> ModelRequest:
    return ModelRequest(
        [SystemMessage("Be brief."), UserMessage("hi")],
        TOOLS,
        settings=settings,
        cache_key=cache_key,
    )


def test_the_anthropic_provider_adds_breakpoints_only_when_caching() -> None:
    model = AnthropicModel("claude-sonnet-4-5", api_key="k")
    body = model.build_request(request("run-1")).body
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert "cache_control" not in json.dumps(model.build_request(request(None)).body)


@pytest.mark.parametrize("cls", [OpenAIChatModel, OpenAIResponsesModel])
def test_openai_gets_one_prompt_cache_key_unless_the_user_sets_one(cls: Any) -> None:
    model = cls("gpt-4.1-mini", api_key="k")
    assert model.build_request(request("run-1")).body["prompt_cache_key"] == "run-1"
    assert (
        model.build_request(request("run-1", prompt_cache_key="mine")).body["prompt_cache_key"]
        == "mine"
    )
    assert "prompt_cache_key" not in model.build_request(request(None)).body
    # an OpenAI-compatible server elsewhere may reject the unknown field
    other = cls("llama", api_key="k", base_url="http://127.0.0.1:1/v1")
    assert "prompt_cache_key" not in other.build_request(request("run-1")).body


class Recorder(ScriptedModel):
    def __init__(self, turns: Any) -> None:
        super().__init__(turns)
        self.keys: list[str | None] = []

    def stream(self, request: ModelRequest) -> Any:
        self.keys.append(request.cache_key)
        return super().stream(request)


def test_an_agent_sends_one_cache_key_per_run() -> None:
    model = Recorder([tool_call_turn(("alpha", {})), text_turn("a"), text_turn("b")])

    def alpha() -> str:
        return "ok"

    agent = Agent(model, [alpha])
    agent.run_sync("one")
    agent.run_sync("two")
    assert model.keys[0] == model.keys[1] != model.keys[2]
    assert model.keys[0] is not None and re.fullmatch(r"toolwire-[0-9a-f]{32}", model.keys[0])
    off = Recorder([text_turn("c")])
    Agent(off, [alpha], context=ContextPolicy(prompt_cache=False)).run_sync("x")
    assert off.keys == [None]
