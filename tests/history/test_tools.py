"""Tool definitions and tool_choice, from OpenAI Chat form to the other providers."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.errors import CallerError, ToolMappingError
from toolwire.history import (
    to_anthropic_tool_choice,
    to_anthropic_tools,
    to_openai_chat_tool_choice,
    to_openai_chat_tools,
    to_responses_tool_choice,
    to_responses_tools,
)
from toolwire.history.tool_defs import EMPTY_PARAMETERS

# The get_weather example of OpenAI's function-calling guide (Chat form).
WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City and country e.g. Bogotá, Colombia"},
        "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["location", "units"],
    "additionalProperties": False,
}
WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current temperature for a given location.",
        "parameters": WEATHER_SCHEMA,
        "strict": True,
    },
}
NO_ARGS = {"type": "function", "function": {"name": "get_time"}}


def test_responses_tools_are_flattened() -> None:
    assert to_responses_tools([WEATHER, NO_ARGS]) == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Get current temperature for a given location.",
            "parameters": WEATHER_SCHEMA,
            "strict": True,
        },
        {"type": "function", "name": "get_time", "parameters": EMPTY_PARAMETERS, "strict": False},
    ]


def test_anthropic_tools_use_input_schema() -> None:
    assert to_anthropic_tools([WEATHER, NO_ARGS]) == [
        {
            "name": "get_weather",
            "description": "Get current temperature for a given location.",
            "input_schema": WEATHER_SCHEMA,
            "strict": True,
        },
        {"name": "get_time", "input_schema": EMPTY_PARAMETERS},
    ]


def test_mapped_schemas_are_copies() -> None:
    mapped = [
        to_responses_tools([WEATHER])[0]["parameters"],
        to_anthropic_tools([WEATHER])[0]["input_schema"],
    ]
    mapped.append(to_openai_chat_tools([WEATHER])[0]["function"]["parameters"])
    mapped.append(to_anthropic_tools([NO_ARGS])[0]["input_schema"])
    for schema in mapped:
        schema["properties"]["injected"] = {}
    assert "injected" not in WEATHER["function"]["parameters"]["properties"]
    assert EMPTY_PARAMETERS["properties"] == {}


def test_chat_tools_are_validated_copies() -> None:
    assert to_openai_chat_tools([WEATHER]) == [WEATHER]


@pytest.mark.parametrize(
    ("tools", "match"),
    [
        ({"type": "function"}, "list"),
        ("get_weather", "list"),
        ([{"type": "web_search"}], r"tools\[0\]"),
        ([{"type": "function"}], r"tools\[0\].*function"),
        ([{"type": "function", "function": {"name": ""}}], "name"),
        ([{"type": "function", "function": {"name": "f", "parameters": "{}"}}], "parameters"),
        ([{"type": "function", "function": {"name": "f", "strict": "yes"}}], "strict"),
        ([{"type": "function", "function": {"name": "f", "description": 3}}], "description"),
    ],
)
def test_malformed_tools_raise_a_caller_error(tools: Any, match: str) -> None:
    for mapping in (to_openai_chat_tools, to_responses_tools, to_anthropic_tools):
        with pytest.raises(ToolMappingError, match=match) as info:
            mapping(tools)
        assert isinstance(info.value, CallerError)


NAMED_CHAT = {"type": "function", "function": {"name": "get_weather"}}
NAMED_RESPONSES = {"type": "function", "name": "get_weather"}


@pytest.mark.parametrize(
    ("choice", "chat", "responses", "anthropic"),
    [
        ("auto", "auto", "auto", {"type": "auto"}),
        ("required", "required", "required", {"type": "any"}),
        ("none", "none", "none", {"type": "none"}),
        (NAMED_CHAT, NAMED_CHAT, NAMED_RESPONSES, {"type": "tool", "name": "get_weather"}),
        (NAMED_RESPONSES, NAMED_CHAT, NAMED_RESPONSES, {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice_table(choice: Any, chat: Any, responses: Any, anthropic: Any) -> None:
    assert to_openai_chat_tool_choice(choice) == chat
    assert to_responses_tool_choice(choice) == responses
    assert to_anthropic_tool_choice(choice) == anthropic


def test_anthropic_tool_choice_carries_parallel_flag() -> None:
    assert to_anthropic_tool_choice("auto", parallel_tool_calls=False) == {
        "type": "auto",
        "disable_parallel_tool_use": True,
    }
    assert (
        to_anthropic_tool_choice(NAMED_CHAT, parallel_tool_calls=False)["disable_parallel_tool_use"]
        is True
    )
    assert to_anthropic_tool_choice("none", parallel_tool_calls=False) == {"type": "none"}
    assert to_anthropic_tool_choice("required", parallel_tool_calls=True) == {"type": "any"}


@pytest.mark.parametrize(
    "choice", ["any", "get_weather", {"type": "function"}, {"type": "tool", "name": "x"}, None, 3]
)
def test_bad_tool_choice_raises(choice: Any) -> None:
    for mapping in (to_openai_chat_tool_choice, to_responses_tool_choice, to_anthropic_tool_choice):
        with pytest.raises(ToolMappingError, match="tool_choice"):
            mapping(choice)
