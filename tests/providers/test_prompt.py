"""ChatML + Hermes prompt rendering for text-driven models."""

from __future__ import annotations

import json

from toolwire.messages import (
    AssistantMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from toolwire.providers.prompt import chatml_hermes, tool_instructions

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
]


def test_full_history_renders_in_chatml() -> None:
    history = [
        SystemMessage("Be brief."),
        UserMessage("Weather in Beijing and Shanghai?"),
        AssistantMessage(
            [
                TextPart("Checking."),
                ToolCall("c1", "get_weather", '{"city": "Beijing"}'),
                ToolCall("c2", "get_weather", '{"city": "Shanghai"}'),
            ]
        ),
        ToolResult("c1", "get_weather", "Sunny"),
        ToolResult("c2", "get_weather", "Rain"),
    ]
    prompt = chatml_hermes(history, TOOLS, "auto")
    text = prompt.text
    assert text.startswith("<|im_start|>system\nBe brief.\n\n# Tools")
    assert json.dumps(TOOLS[0]) in text
    assert (
        '<|im_start|>assistant\nChecking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Shanghai"}}\n</tool_call><|im_end|>\n'
    ) in text
    assert (
        "<|im_start|>user\n<tool_response>\nSunny\n</tool_response>\n<tool_response>\nRain\n</tool_response><|im_end|>\n"
        in text
    )
    assert text.endswith("<|im_start|>assistant\n")
    assert prompt.generation_prompt == "<|im_start|>assistant\n"
    assert "<|im_end|>" in prompt.stop


def test_no_tools_or_choice_none_offers_nothing() -> None:
    assert tool_instructions([], "auto") == ""
    assert tool_instructions(TOOLS, "none") == ""
    text = chatml_hermes([UserMessage("hi")], TOOLS, "none").text
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_required_and_named_choices_are_stated() -> None:
    assert "must call at least one tool" in tool_instructions(TOOLS, "required")
    assert "must call the tool get_weather" in tool_instructions(TOOLS, "get_weather")


def test_default_system_prompt_when_only_tools() -> None:
    text = chatml_hermes([UserMessage("hi")], TOOLS, "auto").text
    assert text.startswith("<|im_start|>system\nYou are a helpful assistant.\n\n# Tools")
