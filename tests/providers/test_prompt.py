"""ChatML + Hermes prompt rendering for text-driven models."""

from __future__ import annotations

import json

from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from toolwire.providers.prompt import chatml_hermes, choice_rule, tool_instructions

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
    """Under none the tools are offered only to a caller whose grammar forbids calls."""
    assert tool_instructions([]) == ""
    assert choice_rule([], "required") == ""
    for tools in ([], TOOLS):
        text = chatml_hermes([UserMessage("hi")], tools, "none").text
        assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_choices_are_stated_after_the_history() -> None:
    history = [UserMessage("hi")]
    for choice, rule in [
        ("required", "You must call at least one tool."),
        ("get_weather", "You must call the tool get_weather."),
        ("none", "Answer now in plain text, without calling a tool."),
    ]:
        text = chatml_hermes(history, TOOLS, choice, offer_under_none=True).text
        assert text.endswith(
            f"<|im_start|>user\nhi<|im_end|>\n<|im_start|>system\n{rule}<|im_end|>\n"
            "<|im_start|>assistant\n"
        )
        assert json.dumps(TOOLS[0]) in text  # offered under none too: the grammar forbids calls
    assert choice_rule(TOOLS, "auto") == ""
    assert "otherwise answer directly" in tool_instructions(TOOLS)


def _through_last_message(text: str, last: str) -> str:
    """``text`` up to the end of the turn that holds ``last`` (the last message's text)."""
    end = text.index("<|im_end|>\n", text.rindex(last)) + len("<|im_end|>\n")
    return text[:end]


def test_each_request_of_a_run_begins_with_the_one_before() -> None:
    """A run's requests, required then auto then the forced answer (none), render
    prompts that extend each other through the earlier one's last message: a model that
    caches the evaluated prompt (llama.cpp) evaluates only what the round added."""
    question: list[Message] = [
        SystemMessage("Be brief."),
        UserMessage("Weather in Beijing and Shanghai?"),
    ]
    first_round: list[Message] = [
        *question,
        AssistantMessage([ToolCall("c1", "get_weather", '{"city": "Beijing"}')]),
        ToolResult("c1", "get_weather", "Sunny"),
    ]
    second_round: list[Message] = [
        *first_round,
        AssistantMessage([ToolCall("c2", "get_weather", '{"city": "Shanghai"}')]),
        ToolResult("c2", "get_weather", "Rain"),
    ]
    run = [
        (question, "required", "Shanghai?"),
        (first_round, "auto", "Sunny"),
        (second_round, "none", "Rain"),
    ]
    prompts = [
        chatml_hermes(messages, TOOLS, choice, offer_under_none=True).text
        for messages, choice, _ in run
    ]
    for (_, _, last), earlier, later in zip(run, prompts, prompts[1:]):
        assert later.startswith(_through_last_message(earlier, last))
    # auto after auto: the whole earlier prompt, the assistant's opening included
    auto = chatml_hermes(second_round, TOOLS, "auto").text
    assert prompts[2].startswith(_through_last_message(auto, "Rain"))
    follow_up = chatml_hermes([*second_round, UserMessage("And Shenzhen?")], TOOLS, "auto").text
    assert follow_up.startswith(auto.removesuffix("<|im_start|>assistant\n"))


def test_default_system_prompt_when_only_tools() -> None:
    text = chatml_hermes([UserMessage("hi")], TOOLS, "auto").text
    assert text.startswith("<|im_start|>system\nYou are a helpful assistant.\n\n# Tools")
