"""Shared pieces of the prompt tests: tools, a fixed clock, and the assistant turn a
template renders, cut the way a completions server would hand it back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from toolwire import formats
from toolwire.formats import ParseResult
from toolwire.formats.results import collect_events
from toolwire.messages import AssistantMessage, Message
from toolwire.prompts import ChatTemplate, prompt_template
from toolwire.prompts.chat import template_messages

from ..helpers.tools import weather_tool

TOOLS: list[dict[str, Any]] = [
    weather_tool(),
    {
        "type": "function",
        "function": {
            "name": "search_files",
            "description": "Search the project's files.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "paths": {"type": "array", "items": {"type": "string"}},
                    "exact": {"type": "boolean"},
                    "limit": {"type": "number"},
                },
                "required": ["query"],
            },
        },
    },
]

# Every shipped (family, variant).
SHIPPED = [
    ("hermes", "qwen3"),
    ("hermes", "qwen2.5"),
    ("qwen3_coder", "qwen3-coder"),
    ("llama", "llama3-json"),
    ("mistral", "v11"),
    ("mistral", "v3"),
    ("deepseek", "v3.1"),
    ("deepseek", "v3"),
    ("deepseek", "r1"),
    ("glm", "glm-4.5"),
    ("kimi", "k2"),
    ("harmony", "gpt-oss"),
    ("gemma", "gemma4"),
    ("gemma", "functiongemma"),
]


def clock() -> datetime:
    return datetime(2026, 7, 1, 12, 0)


def template(family: str, variant: str) -> ChatTemplate:
    return prompt_template(family, variant, clock=clock)


def assistant_turn(
    family: str, variant: str, before: Sequence[Message], assistant: AssistantMessage
) -> tuple[str, str]:
    """The assistant turn ``assistant`` as the model would have written it after
    ``before``, and the generation prompt it was written after.

    The turn is what the template renders for ``assistant`` minus what it renders for
    ``before`` alone, with the role header the generation prompt already holds taken
    off, and cut at the first stop string (a server stops there and drops it).
    """
    tpl = template(family, variant)
    tools = [dict(t) for t in TOOLS]
    head = template_messages(before, family, variant)
    whole = template_messages([*before, assistant], family, variant)
    without = tpl.render(head, tools, generation=False)
    prompt = tpl.render(head, tools, generation=True)
    # What the provider hands the parser (ChatTemplate.__call__ computes it this way).
    opening = prompt[len(without) :] if prompt.startswith(without) else ""
    rendered = tpl.render(whole, tools, generation=False)
    turn = rendered[_shared(prompt, rendered) :]
    ends = [turn.find(stop) for stop in tpl.stop if stop in turn]
    return (turn[: min(ends)] if ends else turn), opening


def _shared(prompt: str, rendered: str) -> int:
    """How much of ``rendered`` the prompt already holds: their common prefix, backed
    off to the end of a marker or line (``<|turn>model\n<|tool_call>`` and
    ``<|turn>model\n<|channel>`` share ``<|`` but not a marker)."""
    shared = 0
    while shared < min(len(prompt), len(rendered)) and prompt[shared] == rendered[shared]:
        shared += 1
    while shared < len(prompt) and shared and prompt[shared - 1] not in ">\n":
        shared -= 1
    return shared


def parse_turn(family: str, variant: str, turn: str, opening: str) -> ParseResult:
    fmt = formats.get(family, variant, tools=TOOLS, generation_prompt=opening)
    return fmt.parse(turn)


def stream_turn(family: str, variant: str, turn: str, opening: str) -> ParseResult:
    """The turn fed to the family's stream one character per delta."""
    fmt = formats.get(family, variant, tools=TOOLS, generation_prompt=opening)
    stream = fmt.stream()
    events = [event for char in turn for event in stream.feed(char)]
    return collect_events([*events, *stream.close()])


def calls_of(result: ParseResult) -> list[tuple[str, Any]]:
    return [(call.name, json.loads(call.arguments)) for call in result.tool_calls]
