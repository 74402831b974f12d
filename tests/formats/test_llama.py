"""Tests of the Llama JSON and pythonic formats."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import FormatError
from toolwire.formats import ParseResult, get
from toolwire.formats.base import Format
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

FIXTURE_NAMES = sorted(p.name for p in (FIXTURES / "llama").glob("*.txt"))


def fmt_for(name: str) -> Format:
    return get("llama", "llama4-pythonic" if name.startswith("pythonic") else "llama3-json")


def parse(name: str, *, strict: bool = False) -> ParseResult:
    return fmt_for(name).parse(load_fixture("llama", name), strict=strict)


def calls(result: ParseResult) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in result.tool_calls]


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_fixture_is_split_invariant(name: str) -> None:
    assert_split_invariant(fmt_for(name), load_fixture("llama", name))


# ---- JSON


def test_rendered_call() -> None:
    result = parse("json_rendered.txt")
    assert result.content is None
    assert calls(result) == [("get_weather", {"city": "Paris", "days": 3})]
    assert result.tool_calls[0].arguments == '{"city": "Paris", "days": 3}'


def test_python_tag_and_end_token_are_dropped() -> None:
    result = parse("json_python_tag_eom.txt")
    assert result.content is None
    assert calls(result) == [("get_weather", {"city": "Paris"})]


def test_text_around_a_call_is_content() -> None:
    result = parse("json_text_around.txt")
    assert result.content == "Here is the result: Would you like to know more?"
    assert calls(result) == [("getOpenIncidentsTool", {})]


def test_semicolon_separated_calls() -> None:
    result = parse("json_multiple_semicolons.txt")
    assert [c.name for c in result.tool_calls] == [
        "searchTool",
        "getOpenIncidentsTool",
        "searchTool",
    ]
    assert result.content is None


def test_newline_separated_calls() -> None:
    result = parse("json_newline_separator.txt")
    assert len(result.tool_calls) == 2
    assert result.content is None


def test_braces_inside_strings() -> None:
    ((_, args),) = calls(parse("json_braces_in_strings.txt"))
    assert args == {"query": "test {value} [complex]", "nested": {"inner": "more {brackets}"}}


def test_brace_in_trailing_prose_is_content() -> None:
    result = parse("json_trailing_brace_text.txt")
    assert result.content == "I used {searchTool} for this."
    assert len(result.tool_calls) == 1


def test_arguments_key_accepted() -> None:
    assert calls(parse("json_arguments_key.txt")) == [("searchTool", {"query": "test"})]


def test_json_truncated_raises() -> None:
    with pytest.raises(FormatError, match="ended inside a tool call"):
        parse("json_truncated.txt", strict=True)


def test_plain_json_answer_is_content() -> None:
    text = '{"title": "x", "name": "y"} and {"a": 1}'
    assert get("llama", "llama3-json").parse(text).content == text


def test_json_arguments_stream() -> None:
    stream = get("llama", "llama3-json").stream(id_prefix="c")
    assert stream.feed('Sure {"na') == [TextDelta("Sure")]  # the space may be a separator
    assert stream.feed('me": "f", "parameters": {"a": [1, ') == [
        ToolCallStarted(0, "c0", "f"),
        ToolCallDelta(0, '{"a": [1, '),
    ]


def test_python_tag_without_json_raises() -> None:
    with pytest.raises(FormatError):
        get("llama", "llama3-json").parse("<|python_tag|>brave_search.call(query='x')", strict=True)


# ---- pythonic


def test_pythonic_types() -> None:
    assert calls(parse("pythonic_more_types.txt")) == [
        (
            "register_user",
            {
                "name": "Doe",
                "age": 9,
                "address": {"city": "LA", "state": "CA"},
                "role": None,
                "passed_test": True,
                "aliases": ["John", "Johnny"],
            },
        )
    ]


def test_pythonic_escapes() -> None:
    ((_, args),) = calls(parse("pythonic_escaped_string.txt"))
    assert args == {"city": "Martha's Vineyard", "metric": '"cool units"'}


def test_pythonic_wrapped_parallel() -> None:
    result = parse("pythonic_python_start_parallel.txt")
    assert calls(result) == [
        ("get_weather", {"city": "LA", "metric": "C"}),
        ("get_weather", {}),
        ("do_something_cool", {"steps": []}),
    ]
    assert result.content is None


def test_pythonic_no_call() -> None:
    assert parse("pythonic_no_call.txt").content == "How can I help you today?"


def test_pythonic_truncated_raises() -> None:
    with pytest.raises(FormatError) as caught:
        parse("pythonic_truncated.txt", strict=True)
    assert caught.value.partial is not None
    assert caught.value.partial.tool_calls[0].arguments == '{"city": "LA", "metric": "C"}'


def test_prose_brackets_stay_content() -> None:
    text = "see [this(that)] and [1, 2] or [x]"
    assert get("llama", "pythonic").parse(text).content == text


def test_triple_quoted_and_nested_values() -> None:
    text = "[f(a='''x\"y''', b=[1, (2, 3)], c={'k': -1.5e3}, d=\"a)b,c\")]"
    assert calls(get("llama", "pythonic").parse(text)) == [
        ("f", {"a": 'x"y', "b": [1, [2, 3]], "c": {"k": -1500.0}, "d": "a)b,c"})
    ]


@pytest.mark.parametrize(
    "text",
    [
        "[f(a=x)]",
        "[f(a=1, a=2)]",
        "[f(a=b'z')]",
        "[f(a=1e999)]",
        "[f(a=__import__('os'))]",
        "[f(a={1, 2})]",
        "[f(a=1) g()]",
        "[f(a=f'{x}')]",
    ],
)
def test_pythonic_malformed_raises(text: str) -> None:
    with pytest.raises(FormatError):
        get("llama", "pythonic").parse(text, strict=True)


def test_pythonic_arguments_stream_per_value() -> None:
    stream = get("llama", "pythonic").stream(id_prefix="c")
    assert stream.feed("[f(a=1, b='x") == [
        ToolCallStarted(0, "c0", "f"),
        ToolCallDelta(0, "{"),
        ToolCallDelta(0, '"a": '),
        ToolCallDelta(0, "1"),
        ToolCallDelta(0, ', "b": '),
    ]
    assert stream.feed("')]") == [ToolCallDelta(0, '"x"'), ToolCallDelta(0, "}")]


_JSON_MARKERS = ["<|python_tag|>", "<|eom_id|>", "<|eot_id|>", '{"name": "f", ', '"parameters": ']
_PY_MARKERS = ["<|python_start|>", "<|python_end|>", "[f(", "a=", ")", "]", ",", "'", '"""']


@settings(max_examples=200, deadline=None)
@given(marker_soup(_JSON_MARKERS, extra=[";", "{", "}"]), marker_soup(_PY_MARKERS))
def test_fuzz_only_toolwire_errors(json_text: str, py_text: str) -> None:
    assert_only_toolwire_errors(get("llama", "llama3-json"), json_text)
    assert_only_toolwire_errors(get("llama", "pythonic"), py_text)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fuzz_split_invariant(data: st.DataObject) -> None:
    variant = data.draw(st.sampled_from(["llama3-json", "llama4-pythonic"]))
    markers = _JSON_MARKERS if variant == "llama3-json" else _PY_MARKERS
    text = data.draw(marker_soup(markers, extra=[";", "\\", "1"]))
    cuts = data.draw(st.sets(st.integers(0, len(text))))
    assert_split_matches(get("llama", variant), text, cuts)


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("llama3-json", "json_text_around.txt"),
        ("llama4-pythonic", "pythonic_python_start_parallel.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(get("llama", variant), load_fixture("llama", name))
