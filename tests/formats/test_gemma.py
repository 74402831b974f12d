"""Gemma 4 and FunctionGemma: fixtures, splits, schema typing, truncation, fuzzing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from toolwire.errors import FormatError
from toolwire.formats import ParseResult, for_model
from toolwire.formats.gemma import FUNCTIONGEMMA, GEMMA4, VARIANTS, GemmaFormat, make
from toolwire.wire.events import TextDelta, ToolCallDelta, ToolCallStarted

from .conftest import (
    assert_long_output_consistent,
    assert_only_toolwire_errors,
    assert_split_invariant,
    load_fixture,
    marker_soup,
    passed_through,
)

# Non-fixture cases use fewer random splits (every fixture gets the default 200).
FEW = 25
FAMILY = "gemma"
TURN = "<|turn>model\n"


def _tool(name: str, **props: str) -> dict[str, Any]:
    properties = {key: {"type": kind} for key, kind in props.items()}
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": properties}},
    }


TOOLS = [
    _tool("get_forecast", days="integer", location="string"),
    _tool("search", query="string", limit="integer", sort="string"),
]

# fixture -> (variant, generation_prompt, content, reasoning, [(name, arguments)])
EXPECTED: dict[str, tuple[str, str | None, str, str, list[tuple[str, str]]]] = {
    "gemma4_single.txt": ("gemma4", None, "", "", [("get_weather", '{"location": "London"}')]),
    "gemma4_text_before_call.txt": (
        "gemma4",
        None,
        "Let me check the weather for you.",
        "",
        [("get_weather", '{"location": "Paris"}')],
    ),
    "gemma4_multiple_calls.txt": (
        "gemma4",
        None,
        "",
        "",
        [("get_weather", '{"location": "London"}'), ("get_time", '{"location": "London"}')],
    ),
    "gemma4_nested.txt": (
        "gemma4",
        None,
        "",
        "",
        [("complex_function", '{"nested": {"inner": "value"}, "list": ["a", "b"]}')],
    ),
    "gemma4_number_bool.txt": (
        "gemma4",
        None,
        "",
        "",
        [("set_status", '{"is_active": true, "count": 42, "score": 3.14}')],
    ),
    "gemma4_string_key.txt": (
        "gemma4",
        None,
        "",
        "",
        [("update_records", '{"record_map": {"3": "new text"}}')],
    ),
    "gemma4_thinking_then_call.txt": (
        "gemma4",
        TURN,
        "",
        "The user wants the weather in London; call get_weather.",
        [("get_weather", '{"location": "London"}')],
    ),
    "gemma4_rendered_history.txt": (
        "gemma4",
        TURN,
        "Let me check.",
        "",
        [("get_weather", '{"location": "London", "unit": "celsius"}')],
    ),
    "gemma4_rendered_interleaved.txt": (
        "gemma4",
        TURN,
        "",
        "Need the forecast first.",
        [("get_forecast", '{"days": 3, "location": "Oslo"}')],
    ),
    "gemma4_thinking_disabled.txt": (
        "gemma4",
        TURN + "<|channel>thought\n<channel|>",
        "The capital of France is Paris.",
        "",
        [],
    ),
    "gemma4_markers_inside_value.txt": (
        "gemma4",
        None,
        "",
        "",
        [("write_file", '{"content": "a } <tool_call|> b, c:d", "path": "x.txt"}')],
    ),
    "functiongemma_two_calls.txt": (
        "functiongemma",
        None,
        "",
        "",
        [("get_weather", '{"location": "London"}'), ("get_time", '{"timezone": "UTC"}')],
    ),
    "functiongemma_typed_escape.txt": (
        "functiongemma",
        None,
        "",
        "",
        [("search", '{"query": "python", "limit": 10, "sort": "relevance"}')],
    ),
    "functiongemma_rendered.txt": (
        "functiongemma",
        None,
        "Sure.",
        "",
        [("get_weather", '{"location": "London"}')],
    ),
}


def _fmt(variant: str, prompt: str | None = None) -> GemmaFormat:
    return make(variant, tools=TOOLS, generation_prompt=prompt)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_parses_as_expected_for_any_split(name: str) -> None:
    variant, prompt, content, reasoning, calls = EXPECTED[name]
    result = assert_split_invariant(
        _fmt(variant, prompt),
        load_fixture(FAMILY, name),
        markers_in_arguments=name == "gemma4_markers_inside_value.txt",
    )
    assert isinstance(result, ParseResult)
    assert result.content == (content or None)
    assert result.reasoning == reasoning
    assert [(c.name, c.arguments) for c in result.tool_calls] == calls
    for call in result.tool_calls:
        assert isinstance(json.loads(call.arguments), dict)


def test_truncated_call_raises_for_any_split() -> None:
    text = load_fixture(FAMILY, "gemma4_truncated.txt")
    assert passed_through(assert_split_invariant(_fmt("gemma4"), text))
    with pytest.raises(FormatError, match="cut off"):
        _fmt("gemma4").parse(text, strict=True)


def test_variants_and_model_ids() -> None:
    assert VARIANTS == ("gemma4", "functiongemma")
    assert for_model("google/gemma-4-31b-it").variant == "gemma4"
    assert for_model("google/functiongemma-270m-it").variant == "functiongemma"
    assert _fmt("gemma4").markers == GEMMA4.all()
    assert _fmt("functiongemma").markers == FUNCTIONGEMMA.all()


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        # The schema says string: a bare 3 stays the text "3".
        ("query:3", {"query": "3"}),
        # The schema says integer: a bare 10 is 10, a delimited "10" too (FunctionGemma
        # delimits every value), a word is left for the validator to report.
        ("limit:10", {"limit": 10}),
        ('limit:<|"|>10<|"|>', {"limit": 10}),
        ("limit:ten", {"limit": "ten"}),
        # No schema for the key: a JSON literal is that literal, anything else a string.
        (
            "other:true,more:1e3,word:hello there",
            {"other": True, "more": 1000.0, "word": "hello there"},
        ),
        # A delimited string for a string parameter keeps its whitespace.
        ('query:<|"|>  spaced  <|"|>', {"query": "  spaced  "}),
        # Nested values are not typed by the top-level schema.
        ('sort:{a:<|"|>x<|"|>,b:[1,<|"|>2<|"|>]}', {"sort": {"a": "x", "b": [1, "2"]}}),
        # Trailing comma and spaces are tolerated.
        ('query:<|"|>q<|"|> , limit : 2 ,', {"query": "q", "limit": 2}),
    ],
)
def test_argument_values_are_typed_by_the_schema(arguments: str, expected: Any) -> None:
    text = f"<|tool_call>call:search{{{arguments}}}<tool_call|>"
    result = assert_split_invariant(_fmt("gemma4"), text, max_examples=FEW)
    assert isinstance(result, ParseResult)
    assert json.loads(result.tool_calls[0].arguments) == expected


def test_missing_commas_between_pairs_are_tolerated() -> None:
    # vLLM test_functiongemma_tool_parser.py streams pairs with no comma between them.
    text = (
        "<start_function_call>call:get_weather{city:<escape>NYC<escape>"
        "unit:<escape>celsius<escape>}<end_function_call>"
    )
    result = _fmt("functiongemma").parse(text)
    assert result.tool_calls[0].arguments == '{"city": "NYC", "unit": "celsius"}'


def test_arguments_stream_incrementally_as_json() -> None:
    stream = _fmt("gemma4").stream(id_prefix="c")
    assert stream.feed('Hi <|tool_call>call:get_weather{location:<|"|>Par') == [
        TextDelta("Hi"),
        ToolCallStarted(0, "c0", "get_weather"),
        ToolCallDelta(0, '{"location": "Par'),
    ]
    # A possible delimiter beginning is held back, never leaked into the JSON.
    assert stream.feed("is<|") == [ToolCallDelta(0, "is")]
    assert stream.feed('"|>,days:4') == [ToolCallDelta(0, '", "days": ')]
    # A bare scalar waits for its terminator (it is typed as a whole).
    assert stream.feed("2}") == [ToolCallDelta(0, "42}")]
    assert stream.feed("<tool_call|>") == []
    assert stream.close() == []


@pytest.mark.parametrize(
    ("prompt", "text", "expected"),
    [
        (TURN + "<|channel>", "thought\nhmm<channel|>ok", ParseResult("ok", "hmm")),
        (TURN + "<|channel>thought\n", "hmm<channel|>ok", ParseResult("ok", "hmm")),
        (TURN, "<|channel>thought\nhmm<channel|>ok<turn|>", ParseResult("ok", "hmm")),
        (TURN, "<|channel>thoughtless<channel|>ok", ParseResult("ok", "thoughtless")),
        (TURN, "<|channel>thou", ParseResult()),  # a truncated label carries nothing
    ],
)
def test_reasoning_channel_and_prefill(prompt: str, text: str, expected: ParseResult) -> None:
    assert assert_split_invariant(_fmt("gemma4", prompt), text, max_examples=FEW) == expected


def test_missing_call_close_before_next_call_is_tolerated() -> None:
    text = "<|tool_call>call:a{}<|tool_call>call:b{x:1}"
    result = _fmt("gemma4").parse(text)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("a", "{}"), ("b", '{"x": 1}')]


@pytest.mark.parametrize(
    "text",
    [
        "<|tool_call>call:get_wea",  # cut in the name
        "<|tool_call>call:f{a:1",  # cut after a bare value
        "<|tool_call>call:f{a:{b:[1,2]",  # unbalanced
        "<|tool_call>call:{a:1}<tool_call|>",  # empty name
        "<|tool_call>call:f{a}<tool_call|>",  # key without ':'
        "<|tool_call>call:f{:1}<tool_call|>",  # empty key
        "<|tool_call>call:f{a:1]<tool_call|>",  # wrong closing bracket
        "<|tool_call>call:f{a:1} junk<tool_call|>",  # text after the arguments
    ],
)
def test_truncated_or_malformed_calls_raise_format_error(text: str) -> None:
    assert passed_through(assert_split_invariant(_fmt("gemma4"), text, max_examples=FEW))


@settings(max_examples=300, deadline=None)
@given(marker_soup(GEMMA4.all(), extra=("call:f{", "a:", ",", "[", "]", "call:search{limit:")))
def test_fuzz_only_toolwire_errors_gemma4(text: str) -> None:
    assert_only_toolwire_errors(_fmt("gemma4"), text)


@settings(max_examples=200, deadline=None)
@given(marker_soup(FUNCTIONGEMMA.all(), extra=("call:f{", "a:", ",", "[", "]")))
def test_fuzz_only_toolwire_errors_functiongemma(text: str) -> None:
    assert_only_toolwire_errors(_fmt("functiongemma"), text)


def test_unknown_variant_is_a_caller_error() -> None:
    from toolwire.errors import CallerError
    from toolwire.formats.gemma import make as make_gemma

    with pytest.raises(CallerError, match="unknown"):
        make_gemma("no-such-variant")


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("gemma4", "gemma4_markers_inside_value.txt"),
        ("functiongemma", "functiongemma_rendered.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(make(variant), load_fixture("gemma", name))
