"""What a right answer to each demo prompt is, and a one-line verdict on what the model did.

The demo exists to show toolwire handling a model's parallel tool calls; whether the
model *chose* the right calls is the model's business, and a run that ends "ok" says
nothing about it. So each demo prompt states its expected calls, and after the run the
first turn's calls are judged against them: ``right tool, right calls``, ``right tool,
wrong calls`` or ``wrong tool``, with what the model did instead. ``toolwire run --demo``
prints the verdict; ``scripts/demo_success_rate.py`` counts them over greedy and sampled
runs and writes the README's table from the same functions, so the two cannot disagree.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import AssistantMessage, Message, ToolCall

__all__ = ["DEMO_CASES", "DemoCase", "Verdict", "first_calls", "judge"]

Parsed = list[tuple[str, Any]]


@dataclass(frozen=True, slots=True)
class DemoCase:
    """One demo prompt and what a right answer would be.

    Attributes:
        key: A short name (``code_search``, ``weather``).
        prompt: The user prompt.
        expected: The right first turn, in words.
        tool: The tool a right answer calls.
        right: Whether parsed ``(name, arguments)`` calls are exactly the right calls.
    """

    key: str
    prompt: str
    expected: str
    tool: str
    right: Callable[[Parsed], bool]


def _code_search_right(calls: Parsed) -> bool:
    queries = sorted(
        str(args.get("query", "")).strip().lower() for _, args in calls if isinstance(args, dict)
    )
    return {name for name, _ in calls} == {"explore_code"} and queries == ["login", "session"]


def _weather_right(calls: Parsed) -> bool:
    asked = sorted(
        (str(args.get("city", "")).strip().lower(), str(args.get("day", "today")))
        for _, args in calls
        if isinstance(args, dict)
    )
    return {name for name, _ in calls} == {"get_weather"} and asked == [
        ("beijing", "tomorrow"),
        ("shanghai", "tomorrow"),
    ]


DEMO_CASES = (
    DemoCase(
        "code_search",
        'Search the code for "login" and for "session" at the same time.',
        'two parallel explore_code calls, query "login" and query "session"',
        "explore_code",
        _code_search_right,
    ),
    DemoCase(
        "weather",
        "What's tomorrow's weather in Beijing and Shanghai?",
        "two parallel get_weather calls, Beijing and Shanghai, day tomorrow",
        "get_weather",
        _weather_right,
    ),
)
"""The demo prompts of ``toolwire run --demo``, in order."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """How the model's first turn compares with the right answer.

    Attributes:
        right_tool: Every call named the expected tool (and there was at least one).
        right_calls: The calls were exactly the expected calls.
        calls: The first turn's calls as ``name(arguments)`` (or its text, if no call).
    """

    right_tool: bool
    right_calls: bool
    calls: str

    @property
    def line(self) -> str:
        """``verdict: ...`` — one line, the model's choice labelled as such."""
        if self.right_calls:
            return f"verdict: right tool, right calls: {self.calls}"
        what = "right tool, wrong calls" if self.right_tool else "wrong tool"
        return f"verdict: {what} (the model's choice, not a toolwire error): {self.calls}"


def first_calls(messages: Sequence[Message]) -> tuple[list[ToolCall], str]:
    """The calls and the text of the first assistant turn of a history."""
    first = next((m for m in messages if isinstance(m, AssistantMessage)), None)
    if first is None:
        return [], ""
    return list(first.tool_calls), first.text


def judge(case: DemoCase, calls: Sequence[ToolCall], text: str = "") -> Verdict:
    """Judge a first turn's calls against ``case``."""
    parsed: Parsed = []
    for call in calls:
        try:
            parsed.append((call.name, json.loads(call.arguments or "{}")))
        except ValueError:
            parsed.append((call.name, None))
    right_tool = bool(parsed) and all(name == case.tool for name, _ in parsed)
    shown = "; ".join(f"{call.name}({call.arguments})" for call in calls)
    if not shown:
        flat = " ".join(text.split())
        shown = f"no call, text {flat[:80]!r}"
    return Verdict(right_tool, right_tool and case.right(parsed), shown)
