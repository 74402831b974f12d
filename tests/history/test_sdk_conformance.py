"""What the encoders produce validates against the official SDKs' request types.

The ``openai`` and ``anthropic`` packages describe request parameters as TypedDicts,
generated from the providers' OpenAPI specs; pydantic can validate data against them.
Content lists are typed ``Iterable`` there, which pydantic validates lazily, so the
validated result is walked to force every nested iterator (tests/helpers/sdk.py). The
SDKs' types come from fixtures, imported only by a process that runs these tests; each
test is skipped where its SDK is not installed.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from toolwire.history import (
    to_anthropic,
    to_anthropic_tool_choice,
    to_anthropic_tools,
    to_openai_chat,
    to_openai_chat_tool_choice,
    to_openai_chat_tools,
    to_responses_input,
    to_responses_tool_choice,
    to_responses_tools,
)
from toolwire.messages import Message

from ..helpers.sdk import conforms
from .strategies import WILD, histories

pydantic: Any = pytest.importorskip("pydantic")


def test_a_broken_block_is_caught_by_the_check_itself(anthropic_types: Any) -> None:
    with pytest.raises(pydantic.ValidationError):
        conforms(
            list[anthropic_types.MessageParam],
            [{"role": "user", "content": [{"type": "tool_result"}]}],
        )


@settings(max_examples=200, deadline=None)
@given(histories(WILD))
def test_openai_chat_messages_conform(chat_types: Any, history: list[Message]) -> None:
    conforms(list[chat_types.ChatCompletionMessageParam], to_openai_chat(history))


@settings(max_examples=200, deadline=None)
@given(histories(WILD))
def test_responses_input_conforms(responses_types: Any, history: list[Message]) -> None:
    _, items = to_responses_input(history)
    conforms(list[responses_types.ResponseInputItemParam], items)


@settings(max_examples=200, deadline=None)
@given(histories(WILD))
def test_anthropic_messages_conform(anthropic_types: Any, history: list[Message]) -> None:
    _, turns = to_anthropic(history)
    conforms(list[anthropic_types.MessageParam], turns)


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "d",
            "parameters": {"type": "object", "properties": {}},
            "strict": True,
        },
    },
    {"type": "function", "function": {"name": "get_time"}},
]


def test_tool_definitions_conform(
    anthropic_types: Any, chat_types: Any, responses_types: Any
) -> None:
    conforms(list[chat_types.ChatCompletionToolParam], to_openai_chat_tools(TOOLS))
    conforms(list[responses_types.FunctionToolParam], to_responses_tools(TOOLS))
    conforms(list[anthropic_types.ToolParam], to_anthropic_tools(TOOLS))


@pytest.mark.parametrize(
    "choice",
    ["auto", "required", "none", "get_weather"],
)
def test_tool_choices_conform(
    choice: Any, anthropic_types: Any, chat_types: Any, responses_types: Any
) -> None:
    conforms(chat_types.ChatCompletionToolChoiceOptionParam, to_openai_chat_tool_choice(choice))
    conforms(responses_types.response_create_params.ToolChoice, to_responses_tool_choice(choice))
    conforms(
        anthropic_types.ToolChoiceParam, to_anthropic_tool_choice(choice, parallel_tool_calls=False)
    )
