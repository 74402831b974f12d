"""Tests of the GLM ``<tool_call>NAME<arg_key>…`` format (GLM-4.5/4.6 and GLM-4.7/5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import CallerError, FormatError
from toolwire.formats import ParseResult, for_model, get
from toolwire.formats.glm import GlmFormat
from toolwire.wire.events import TextDelta, ToolCallDelta, ToolCallStarted

from .conftest import (
    FIXTURES,
    assert_long_output_consistent,
    assert_only_toolwire_errors,
    assert_split_invariant,
    assert_split_matches,
    load_fixture,
    marker_soup,
)


def tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": properties}},
    }


TOOLS = [
    tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}),
    tool("get_current_date", {}),
    tool(
        "book",
        {
            "room": {"type": "string"},
            "guests": {"type": "integer"},
            "breakfast": {"type": "boolean"},
            "prefs": {"type": "object"},
            "nights": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string"},
        },
    ),
]

# fixture -> (variant, generation prompt); None means the variant's default prompt.
FIXTURE_SETUP: dict[str, tuple[str, str | None]] = {
    "glm45_rendered.txt": ("glm-4.5", None),
    "glm45_vllm_newlines.txt": ("glm-4.5", None),
    "glm45_typed_values.txt": ("glm-4.5", None),
    "glm47_sglang_two_calls.txt": ("glm-4.7", None),
    "glm47_zero_arg.txt": ("glm-4.7", "<|assistant|></think>"),
    "glm47_marker_in_value.txt": ("glm-4.7", None),
}


def glm(variant: str = "glm-4.5", prompt: str | None = None, tools: Any = TOOLS) -> GlmFormat:
    fmt = get("glm", variant, tools=tools, generation_prompt=prompt)
    assert isinstance(fmt, GlmFormat)
    return fmt


def parse(name: str) -> ParseResult:
    variant, prompt = FIXTURE_SETUP[name]
    return glm(variant, prompt).parse(load_fixture("glm", name))


def args(result: ParseResult, index: int) -> object:
    return json.loads(result.tool_calls[index].arguments)


def test_every_fixture_file_is_listed() -> None:
    listed = (FIXTURES / "glm").glob("*.txt")  # variant_*: test_contract.py
    assert sorted(p.name for p in listed if not p.name.startswith("variant_")) == sorted(
        FIXTURE_SETUP
    )


@pytest.mark.parametrize("name", sorted(FIXTURE_SETUP))
def test_every_fixture_is_split_invariant(name: str) -> None:
    variant, prompt = FIXTURE_SETUP[name]
    outcome = assert_split_invariant(
        glm(variant, prompt),
        load_fixture("glm", name),
        markers_in_arguments="marker_in_value" in name,
    )
    assert isinstance(outcome, ParseResult)
    assert outcome.tool_calls


def test_glm45_rendered_history() -> None:
    result = parse("glm45_rendered.txt")
    assert result.reasoning == "The user wants weather."
    # The template's newlines around <think> and <tool_call> are layout, not content.
    assert result.content == "I'll check the weather."
    assert [c.arguments for c in result.tool_calls] == [
        '{"city": "Beijing", "days": 3}',
        '{"city": "上海", "days": 1}',
    ]


def test_glm45_engine_shape() -> None:
    result = parse("glm45_vllm_newlines.txt")
    assert result == ParseResult(None, "", result.tool_calls)
    assert args(result, 0) == {"city": "Beijing"}


def test_values_are_typed_by_schema() -> None:
    result = parse("glm45_typed_values.txt")
    assert result.reasoning == ""
    assert args(result, 0) == {
        "room": "007",
        "guests": 2,
        "breakfast": True,
        "prefs": {"floor": "high", "quiet": True},
        "nights": ["2025-01-01", "2025-01-02"],
        "note": "  late check-in\n please ",
    }


def test_without_a_schema_values_stay_strings() -> None:
    result = glm(tools=None).parse(load_fixture("glm", "glm45_typed_values.txt"))
    assert args(result, 0)["guests"] == "2"  # type: ignore[index]
    assert args(result, 0)["breakfast"] == "true"  # type: ignore[index]


def test_a_value_that_does_not_fit_its_type_stays_text() -> None:
    text = "<tool_call>get_weather<arg_key>days</arg_key><arg_value>three</arg_value></tool_call>"
    assert args(glm().parse(text), 0) == {"days": "three"}


def test_glm47_default_prompt_starts_in_reasoning() -> None:
    result = parse("glm47_sglang_two_calls.txt")
    assert result.reasoning == "Two cities, same date."
    assert result.content == "Checking."
    assert args(result, 0) == {"city": "北京", "date": "2024-06-27"}
    assert args(result, 1) == {"city": "上海", "date": "2024-06-27"}


def test_glm47_zero_argument_call() -> None:
    result = parse("glm47_zero_arg.txt")
    assert result.content == "Checking."
    assert result.tool_calls[0].name == "get_current_date"
    assert result.tool_calls[0].arguments == "{}"


def test_marker_text_inside_a_value_is_value() -> None:
    result = parse("glm47_marker_in_value.txt")
    assert (result.content, result.reasoning) == (None, "")
    assert args(result, 0) == {"text": "see <tool_call>x<arg_key>k</arg_key></tool_call> here"}


def test_string_values_stream_as_they_arrive() -> None:
    stream = glm().stream(id_prefix="c")
    events = stream.feed("Hi<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Bei")
    assert events == [
        TextDelta("Hi"),
        ToolCallStarted(0, "c0", "get_weather"),
        ToolCallDelta(0, '{"city": "Bei'),
    ]
    events = stream.feed("jing</arg_value>\n<arg_key>days</arg_key><arg_value>3")
    # "days" is an integer: held until its value closes.
    assert events == [ToolCallDelta(0, 'jing", "days": ')]
    assert stream.feed("</arg_value></tool_call>") == [ToolCallDelta(0, "3}")]
    assert stream.close() == []


def test_truncated_call_raises_with_partial() -> None:
    text = load_fixture("glm", "glm45_rendered.txt")
    with pytest.raises(FormatError, match="truncated") as info:
        glm().parse(text[: text.index("Beijing")], strict=True)
    assert info.value.partial is not None
    assert info.value.partial.content == "I'll check the weather."


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call></tool_call>",
        "<tool_call>f<arg_key>a</arg_key>oops<arg_value>1</arg_value></tool_call>",
        "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value>junk</tool_call>",
        "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value>"
        "<arg_key>a</arg_key><arg_value>2</arg_value></tool_call>",
        "<tool_call>f<arg_value>1</arg_value></tool_call>",
    ],
)
def test_malformed_calls_raise(text: str) -> None:
    with pytest.raises(FormatError):
        glm().parse(text, strict=True)


def test_end_of_turn_token_is_dropped() -> None:
    text = "<tool_call>get_current_date</tool_call><|observation|>"
    assert glm("glm-4.7", "<|assistant|></think>").parse(text).content is None


def test_unknown_variant() -> None:
    with pytest.raises(CallerError):
        get("glm", "glm-3")


@pytest.mark.parametrize(
    ("model", "variant"),
    [
        ("zai-org/GLM-4.5-Air", "glm-4.5"),
        ("zai-org/GLM-4.6", "glm-4.5"),
        ("zai-org/GLM-4.7", "glm-4.7"),
    ],
)
def test_for_model(model: str, variant: str) -> None:
    assert for_model(model).variant == variant


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_fuzz_marker_soup_only_toolwire_errors(data: st.DataObject) -> None:
    fmt = glm()
    text = data.draw(marker_soup(fmt.markers, ["get_weather", "days", "city", "3", "\n"]))
    assert_only_toolwire_errors(fmt, text)
    cuts = data.draw(st.sets(st.integers(min_value=1, max_value=max(1, len(text) - 1))))
    assert_split_matches(fmt, text, cuts)


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("glm-4.5", "glm45_rendered.txt"),
        ("glm-4.5", "glm47_sglang_two_calls.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(get("glm", variant), load_fixture("glm", name))


def test_a_think_block_between_answers_is_reasoning() -> None:
    # GLM thinks between its answers and calls (interleaved thinking): a later <think>
    # opens reasoning again instead of leaking into the content.
    fmt = get("glm", "glm-4.5")
    result = assert_split_invariant(fmt, load_fixture("glm", "variant_interleaved_thinking.txt"))
    assert isinstance(result, ParseResult)
    assert result.content == "Hello, world!\nWhat's up?"
    assert result.reasoning == "I'm\nthinkingThinking2"
    assert [c.name for c in result.tool_calls] == ["special_function"]
