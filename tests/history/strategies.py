"""Hypothesis strategies: valid neutral histories, per provider's representable subset.

``histories(profile)`` builds histories that pass ``check_history`` — rounds of an
optional user message, an assistant message, and the results of its calls in any order
— with the parts, arguments and statuses the profile says its provider can carry. The
``WILD`` profile draws anything the neutral model allows, for "encoding never fails"
properties and for the documented projections.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from toolwire.history import TOOL_ERROR_PREFIX
from toolwire.messages import (
    AssistantMessage,
    Message,
    Part,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)

TEXT = st.text(max_size=12)
NONEMPTY = st.text(min_size=1, max_size=12)
TOOL_NAMES = st.sampled_from(["get_weather", "search", "read_file", "lookup"])

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=4,
)
JSON_OBJECTS = st.dictionaries(TEXT, JSON_VALUES, max_size=3)

# Arguments exactly as a model might send them: JSON in any spacing, broken JSON, "".
ANY_ARGUMENTS = st.one_of(
    JSON_OBJECTS.map(json.dumps),
    JSON_OBJECTS.map(lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)),
    st.just(""),
    st.sampled_from(['{"a": ', "[1, 2]", '"text"', "{'a': 1}", "42", "nul", "{} {}"]),
    TEXT,
)
# What Anthropic gives back: json.dumps of an object, or text that is no JSON object.
CANONICAL_ARGUMENTS = st.one_of(
    JSON_OBJECTS.map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.sampled_from(['{"a": ', "[1, 2]", '"text"', "{'a': 1}", "42", "nul", "{} {}"]),
)


@dataclass(frozen=True)
class Profile:
    """What one provider can carry."""

    parts: st.SearchStrategy[list[Any]]  # parts, with the string "call" for each call
    arguments: st.SearchStrategy[str]
    results: st.SearchStrategy[tuple[ToolStatus, str]]
    mid_system: bool  # system messages after the first position survive


def _ok_or_prefixed() -> st.SearchStrategy[tuple[ToolStatus, str]]:
    ok = TEXT.filter(lambda t: not t.startswith(TOOL_ERROR_PREFIX)).map(
        lambda t: (ToolStatus.OK, t)
    )
    error = TEXT.map(lambda t: (ToolStatus.ERROR, TOOL_ERROR_PREFIX + t))
    return ok | error


_CALL = st.just("call")  # a placeholder the history builder turns into a ToolCall


@st.composite
def _chat_parts(draw: st.DrawFn) -> list[Any]:
    parts: list[Any] = []
    if draw(st.booleans()):
        parts.append(ReasoningPart(draw(NONEMPTY)))
    if draw(st.booleans()):
        parts.append(TextPart(draw(NONEMPTY)))
    return parts + ["call"] * draw(st.integers(0, 3))


_RESPONSES_PART = st.one_of(
    TEXT.map(TextPart),
    st.builds(ReasoningPart, TEXT, redacted=st.none() | TEXT, id=NONEMPTY.map(lambda s: "rs_" + s)),
    _CALL,
)
_ANTHROPIC_PART = st.one_of(
    NONEMPTY.map(TextPart),
    st.builds(ReasoningPart, TEXT, signature=NONEMPTY),
    st.builds(lambda data: ReasoningPart("", redacted=data), NONEMPTY),
    _CALL,
)
_WILD_PART = st.one_of(
    TEXT.map(TextPart),
    st.builds(
        ReasoningPart,
        TEXT,
        signature=st.none() | TEXT,
        redacted=st.none() | TEXT,
        id=st.none() | TEXT,
    ),
    _CALL,
)

CHAT = Profile(_chat_parts(), ANY_ARGUMENTS, _ok_or_prefixed(), mid_system=True)
RESPONSES = Profile(
    st.lists(_RESPONSES_PART, min_size=1, max_size=5),
    ANY_ARGUMENTS,
    _ok_or_prefixed(),
    mid_system=True,
)
ANTHROPIC = Profile(
    st.lists(_ANTHROPIC_PART, min_size=1, max_size=5),
    CANONICAL_ARGUMENTS,
    st.tuples(st.sampled_from([ToolStatus.OK, ToolStatus.ERROR]), TEXT),
    mid_system=False,
)
WILD = Profile(
    st.lists(_WILD_PART, max_size=5),
    ANY_ARGUMENTS,
    st.tuples(st.sampled_from(list(ToolStatus)), TEXT),
    True,
)
# WILD with fixed arguments: cheaper to draw, for properties that never read arguments.
LIGHT = Profile(WILD.parts, st.just("{}"), WILD.results, True)


@st.composite
def histories(draw: st.DrawFn, profile: Profile) -> list[Message]:
    """A history that passes ``check_history``, drawn within ``profile``."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(SystemMessage(draw(TEXT)))
    counter = iter(range(10**6))
    for _ in range(draw(st.integers(0, 4))):
        last = messages[-1] if messages else None
        if profile.mid_system and draw(st.integers(0, 5)) == 0:
            messages.append(SystemMessage(draw(TEXT)))
        if not isinstance(last, ToolResult) or draw(st.booleans()):
            messages.append(UserMessage(draw(TEXT)))
        assistant = _assistant(draw, profile, counter)
        messages.append(assistant)
        messages.extend(_results(draw, profile, assistant))
    return messages


def _assistant(draw: st.DrawFn, profile: Profile, counter: Any) -> AssistantMessage:
    parts: list[Part] = []
    for part in draw(profile.parts):
        if isinstance(part, str):
            call_id = f"call_{next(counter)}_{draw(st.text(alphabet='abcXYZ09-_', max_size=4))}"
            parts.append(ToolCall(call_id, draw(TOOL_NAMES), draw(profile.arguments)))
        else:
            parts.append(part)
    return AssistantMessage(parts)


def _results(draw: st.DrawFn, profile: Profile, assistant: AssistantMessage) -> list[ToolResult]:
    calls = draw(st.permutations(assistant.tool_calls))
    results = []
    for call in calls:
        status, content = draw(profile.results)
        results.append(ToolResult(call.id, call.name, content, status))
    return results


# Arbitrary JSON-like data whose keys are the providers' field names, for fuzzing.
_KEYS = st.sampled_from(
    [
        "role", "content", "type", "text", "tool_calls", "id", "function", "name", "arguments",
        "tool_call_id", "reasoning_content", "call_id", "output", "summary", "input",
        "tool_use_id", "is_error", "thinking", "signature", "data", "choices", "message",
        "finish_reason", "usage", "status", "stop_reason", "error", "refusal", "encrypted_content",
        "incomplete_details", "reason",
    ]
)  # fmt: skip
_SCALARS = st.sampled_from(
    [
        "user", "assistant", "system", "tool", "developer", "function", "text", "tool_use",
        "tool_result", "thinking", "redacted_thinking", "message", "reasoning", "function_call",
        "function_call_output", "summary_text", "output_text", "completed", "incomplete", "failed",
        "{}", "", "call_1", "x",
    ]
) | st.none() | st.booleans() | st.integers() | st.floats() | TEXT  # fmt: skip
FUZZ = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=12,
)
