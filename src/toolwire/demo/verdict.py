"""What a right answer to each demo prompt is, and a one-line verdict on what the model did.

The demo exists to show toolwire handling a model's parallel tool calls; whether the
model *chose* the right calls is the model's business, and a run that ends "ok" says
nothing about it. So each demo prompt states its expected calls, and after the run the
whole run is judged against them (:func:`judge_run`): every expected call made, in one
turn (parallel) or across turns (the weather prompt's second city may come in a second
round), no call that was not asked for, and an answer at the end — where an answer
that is a tool call written as text (``call_shaped_text``,
:mod:`toolwire.policies.call_shaped`) is said to be one, not counted as an answer.
``toolwire run --demo`` prints the verdict; ``scripts/demo_success_rate.py`` counts them
over greedy and sampled runs and writes the success table from the same functions, so
the two cannot disagree. :func:`judge` still judges one turn's calls alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import AssistantMessage, Message, ToolCall
from ..policies.call_shaped import call_shape

__all__ = [
    "DEMO_CASES",
    "DemoCase",
    "RunVerdict",
    "Verdict",
    "first_calls",
    "judge",
    "judge_run",
    "run_calls",
]

Parsed = list[tuple[str, Any]]


@dataclass(frozen=True, slots=True)
class DemoCase:
    """One demo prompt and what a right answer would be.

    Attributes:
        key: A short name (``code_search``, ``weather``).
        prompt: The user prompt.
        expected: The right calls, in words.
        tool: The tool a right answer calls.
        wanted: The expected calls, each as its :attr:`label` (``"login"``,
            ``"beijing tomorrow"``).
        label: A call's parsed arguments as the label :attr:`wanted` names it by.
    """

    key: str
    prompt: str
    expected: str
    tool: str
    wanted: tuple[str, ...]
    label: Callable[[dict[str, Any]], str]

    def right(self, calls: Parsed) -> bool:
        """Whether parsed ``(name, arguments)`` calls are exactly the expected calls."""
        labels = [self.label_of(name, args) for name, args in calls]
        return sorted(label or "" for label in labels) == sorted(self.wanted)

    def label_of(self, name: str, args: Any) -> str | None:
        """The label of one expected call, or ``None`` for a call that is not one."""
        if name != self.tool or not isinstance(args, dict):
            return None
        label = self.label(args)
        return label if label in self.wanted else None


def _query(args: dict[str, Any]) -> str:
    return str(args.get("query", "")).strip().lower()


def _city_day(args: dict[str, Any]) -> str:
    return f"{str(args.get('city', '')).strip().lower()} {args.get('day', 'today')}"


DEMO_CASES = (
    DemoCase(
        "code_search",
        'Search the code for "login" and for "session" at the same time.',
        'two explore_code calls, query "login" and query "session" (in parallel)',
        "explore_code",
        ("login", "session"),
        _query,
    ),
    DemoCase(
        "weather",
        "What's tomorrow's weather in Beijing and Shanghai?",
        "get_weather for Beijing and for Shanghai, day tomorrow (in one turn or two)",
        "get_weather",
        ("beijing tomorrow", "shanghai tomorrow"),
        _city_day,
    ),
)
"""The demo prompts of ``toolwire run --demo``, in order."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """How one turn's calls compare with the right answer (:func:`judge`).

    Attributes:
        right_tool: Every call named the expected tool (and there was at least one).
        right_calls: The calls were exactly the expected calls.
        calls: The turn's calls as ``name(arguments)`` (or its text, if no call).
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


def _parse(calls: Sequence[ToolCall]) -> Parsed:
    parsed: Parsed = []
    for call in calls:
        try:
            parsed.append((call.name, json.loads(call.arguments or "{}")))
        except ValueError:
            parsed.append((call.name, None))
    return parsed


def _shown(calls: Sequence[ToolCall], text: str) -> str:
    shown = "; ".join(f"{call.name}({call.arguments})" for call in calls)
    return shown or f"no call, text {' '.join(text.split())[:80]!r}"


def judge(case: DemoCase, calls: Sequence[ToolCall], text: str = "") -> Verdict:
    """Judge one turn's calls against ``case`` (the whole run: :func:`judge_run`)."""
    parsed = _parse(calls)
    right_tool = bool(parsed) and all(name == case.tool for name, _ in parsed)
    return Verdict(right_tool, right_tool and case.right(parsed), _shown(calls, text))


def run_calls(messages: Sequence[Message]) -> list[list[ToolCall]]:
    """The calls of each assistant turn of a history that made calls, in order."""
    return [
        list(m.tool_calls) for m in messages if isinstance(m, AssistantMessage) and m.tool_calls
    ]


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """How a whole run compares with the right answer (:func:`judge_run`).

    Attributes:
        right_tool: Every call of the run named the expected tool (at least one call).
        all_calls: Every expected call was made, in some turn.
        only_right: No call was made that the prompt did not ask for (repeats of an
            expected call included).
        turns: The turns with calls it took to make the expected calls: 1 is in one
            turn (parallel); 0 when they were not all made.
        answered: The run ended with answer text that is not a call written as text.
        call_shaped: What makes the last turn's text look like a tool call, or ``""``.
        calls: Every call as ``name(arguments)``, by round.
        missing: The expected calls never made (their labels).
    """

    right_tool: bool
    all_calls: bool
    only_right: bool
    turns: int
    answered: bool
    call_shaped: str
    calls: str
    missing: tuple[str, ...] = ()

    @property
    def right_calls(self) -> bool:
        """Every expected call made and nothing else."""
        return self.all_calls and self.only_right

    @property
    def in_one_turn(self) -> bool:
        """The expected calls all came in the first turn with calls (in parallel)."""
        return self.right_calls and self.turns == 1

    @property
    def success(self) -> bool:
        """The right calls, then an answer."""
        return self.right_calls and self.answered

    @property
    def line(self) -> str:
        """``verdict: ...`` — one line on the whole run, the model's choice labelled as such."""
        if self.right_calls:
            how = "in one turn (parallel)" if self.turns == 1 else f"across {self.turns} turns"
            calls = f"verdict: right calls, {how}: {self.calls}"
        else:
            if not self.right_tool:
                what = "wrong tool"
            elif not self.all_calls:
                what = f"right tool, missing {', '.join(self.missing)}"
            else:
                what = "right tool, calls not asked for"
            calls = f"verdict: {what} (the model's choice, not a toolwire error): {self.calls}"
        return f"{calls}; {self._answer_words()}"

    def _answer_words(self) -> str:
        if self.call_shaped:
            return (
                f"no answer: the last turn's text is {self.call_shaped} written as text, "
                "which no tool ran (the model's choice, not a toolwire error)"
            )
        return "then an answer" if self.answered else "no answer"


def judge_run(case: DemoCase, messages: Sequence[Message], tools: Sequence[str] = ()) -> RunVerdict:
    """Judge a whole run's history against ``case``.

    Args:
        case: The demo prompt.
        messages: The run's history (``RunResult.messages`` or the stream's).
        tools: The offered tools' names, for telling call-shaped text (default: the
            case's tool).
    """
    turns = run_calls(messages)
    parsed = [_parse(calls) for calls in turns]
    names = [name for turn in parsed for name, _ in turn]
    right_tool = bool(names) and all(name == case.tool for name in names)
    labels = [[case.label_of(name, args) for name, args in turn] for turn in parsed]
    made: set[str] = set()
    needed = 0
    for number, turn_labels in enumerate(labels, 1):
        made.update(label for label in turn_labels if label is not None)
        if not needed and made >= set(case.wanted):
            needed = number
    missing = tuple(label for label in case.wanted if label not in made)
    only_right = bool(names) and all(label is not None for turn in labels for label in turn)
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    text = last.text if last is not None and not last.tool_calls else ""
    shape = call_shape(text, tuple(tools) or (case.tool,)) or ""
    shown = " | ".join(
        f"round {n}: {_shown(calls, '')}" for n, calls in enumerate(turns, 1)
    ) or _shown([], text)
    return RunVerdict(
        right_tool=right_tool,
        all_calls=not missing,
        only_right=only_right,
        turns=needed,
        answered=bool(text.strip()) and not shape,
        call_shaped=shape,
        calls=shown,
        missing=missing,
    )
