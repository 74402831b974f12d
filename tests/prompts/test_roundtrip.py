"""Render → parse: an assistant turn rendered by a family's template and read back by
the family's own parser gives the same calls, for every shipped template.

The turn is cut from the rendered history the way a completions server would hand the
model's output back (after the generation prompt, up to the first stop string), and
read both whole and streamed one character per delta. String
values avoid ``<`` and ``>`` in the families that write values as raw text between
tags (Qwen3-Coder, GLM, Gemma): their markup has no escape, so a value holding a
closing tag cannot survive any renderer. gpt-oss and Llama 3 write one call per turn
(their templates render one), so their property draws one call.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.messages import AssistantMessage, TextPart, ToolCall, ToolResult, UserMessage

from .helpers import SHIPPED, assistant_turn, calls_of, parse_turn, stream_turn

RAW_TEXT = {"qwen3_coder", "glm", "gemma"}
ONE_CALL = {("harmony", "gpt-oss"), ("llama", "llama3-json")}


def _text(raw: bool) -> st.SearchStrategy[str]:
    if raw:
        alphabet = st.characters(
            codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters="<>"
        )
        return st.text(alphabet, min_size=1, max_size=12).map(str.strip).filter(bool)
    return st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


def _arguments(raw: bool) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    text = _text(raw)
    weather = st.fixed_dictionaries(
        {"city": text}, optional={"days": st.integers(-1000, 1000)}
    ).map(lambda args: ("get_weather", args))
    search = st.fixed_dictionaries(
        {"query": text},
        optional={
            "paths": st.lists(text, max_size=3),
            "exact": st.booleans(),
            "limit": st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3)),
        },
    ).map(lambda args: ("search_files", args))
    return st.one_of(weather, search)


@st.composite
def turns(draw: st.DrawFn, family: str, variant: str) -> list[tuple[str, dict[str, Any]]]:
    most = 1 if (family, variant) in ONE_CALL else 3
    return draw(st.lists(_arguments(family in RAW_TEXT), min_size=1, max_size=most))


@pytest.mark.parametrize(("family", "variant"), SHIPPED, ids=str)
def test_rendered_calls_parse_back(family: str, variant: str) -> None:
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(calls=turns(family, variant), preface=st.sampled_from(["", "Let me look."]))
    def check(calls: list[tuple[str, dict[str, Any]]], preface: str) -> None:
        before = [
            UserMessage("What is the weather in Paris?"),
            AssistantMessage([ToolCall("call_prev", "get_weather", '{"city": "Paris"}')]),
            ToolResult("call_prev", "get_weather", "sunny"),
        ]
        parts: list[Any] = [TextPart(preface)] if preface else []
        parts += [
            ToolCall(f"call_{i}", name, json.dumps(args, ensure_ascii=False))
            for i, (name, args) in enumerate(calls)
        ]
        turn, opening = assistant_turn(family, variant, before, AssistantMessage(parts))
        result = parse_turn(family, variant, turn, opening)
        assert calls_of(result) == calls, turn
        assert not result.notices, (turn, result.notices)
        assert calls_of(stream_turn(family, variant, turn, opening)) == calls, turn

    check()
