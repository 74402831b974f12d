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
from toolwire.history.tool_defs import (
    EMPTY_PARAMETERS,
    anthropic_tool_fields,
    chat_tool,
    openai_chat_tool_fields,
    responses_tool_fields,
    shared_chat_tools,
    tool_defs,
)
from toolwire.tooldef import ToolDef

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
        ("get_weather", NAMED_CHAT, NAMED_RESPONSES, {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice_table(choice: Any, chat: Any, responses: Any, anthropic: Any) -> None:
    assert to_openai_chat_tool_choice(choice) == chat
    assert to_responses_tool_choice(choice) == responses
    assert to_anthropic_tool_choice(choice) == anthropic


def test_a_named_free_form_tool_is_chosen_as_custom() -> None:
    sql = ToolDef("write_sql", freeform=True, format={"type": "text"})
    assert to_openai_chat_tool_choice("write_sql", [sql]) == {
        "type": "custom",
        "custom": {"name": "write_sql"},
    }
    assert to_responses_tool_choice("write_sql", [sql]) == {"type": "custom", "name": "write_sql"}


def test_anthropic_tool_choice_carries_parallel_flag() -> None:
    assert to_anthropic_tool_choice("auto", parallel_tool_calls=False) == {
        "type": "auto",
        "disable_parallel_tool_use": True,
    }
    assert (
        to_anthropic_tool_choice("get_weather", parallel_tool_calls=False)[
            "disable_parallel_tool_use"
        ]
        is True
    )
    assert to_anthropic_tool_choice("none", parallel_tool_calls=False) == {"type": "none"}
    assert to_anthropic_tool_choice("required", parallel_tool_calls=True) == {"type": "any"}


@pytest.mark.parametrize("choice", ["", NAMED_CHAT, {"type": "tool", "name": "x"}, None, 3])
def test_bad_tool_choice_raises(choice: Any) -> None:
    for mapping in (to_openai_chat_tool_choice, to_responses_tool_choice, to_anthropic_tool_choice):
        with pytest.raises(ToolMappingError, match="tool_choice"):
            mapping(choice)


def test_neutral_and_chat_definitions_map_alike() -> None:
    neutral = ToolDef(
        "get_weather",
        "Get current temperature for a given location.",
        WEATHER_SCHEMA,
        strict=True,
    )
    assert tool_defs([WEATHER, NO_ARGS]) == [neutral, ToolDef("get_time")]
    for mapping in (to_openai_chat_tools, to_responses_tools, to_anthropic_tools):
        assert mapping([neutral]) == mapping([WEATHER])


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"name": ""}, "name"),
        ({"name": "f", "parameters": "{}"}, "parameters"),
        ({"name": "f", "strict": 1}, "strict"),
        ({"name": "f", "format": {"type": "text"}}, "free-form"),
        ({"name": "f", "freeform": "yes"}, "freeform"),
    ],
)
def test_a_malformed_tool_def_is_refused_when_made(fields: dict[str, Any], match: str) -> None:
    with pytest.raises(ToolMappingError, match=match):
        ToolDef(**fields)


def test_one_request_field_set_per_provider() -> None:
    tools = [ToolDef("get_time")]
    assert openai_chat_tool_fields(tools, "get_time", False) == {
        "tools": [{"type": "function", "function": {"name": "get_time"}}],
        "tool_choice": {"type": "function", "function": {"name": "get_time"}},
        "parallel_tool_calls": False,
    }
    assert responses_tool_fields(tools, "auto", None) == {
        "tools": [
            {
                "type": "function",
                "name": "get_time",
                "parameters": EMPTY_PARAMETERS,
                "strict": False,
            }
        ],
        "tool_choice": "auto",
    }
    assert anthropic_tool_fields(tools, "required", False) == {
        "tools": [{"name": "get_time", "input_schema": EMPTY_PARAMETERS}],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
    }


def test_shared_chat_forms_are_each_definitions_chat_form_made_once() -> None:
    first = ToolDef("a", "A.", {"type": "object", "properties": {"x": {"type": "string"}}})
    second = ToolDef("b", None, {"type": "object", "properties": {}})
    forms = shared_chat_tools([first, second])
    assert forms == [chat_tool(first), chat_tool(second)]
    again = shared_chat_tools([second, first])  # the same definitions: the same dicts
    assert again[0] is forms[1] and again[1] is forms[0]
    # An equal but distinct definition gets its own form (kept by identity, not value).
    twin = ToolDef("a", "A.", {"type": "object", "properties": {"x": {"type": "string"}}})
    assert shared_chat_tools([twin])[0] == forms[0]
    assert shared_chat_tools([twin])[0] is not forms[0]
