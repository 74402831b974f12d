"""Tests of the Qwen3-Coder XML format."""

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

FIXTURE_NAMES = sorted(p.name for p in (FIXTURES / "qwen3_coder").glob("*.txt"))


def tool(name: str, **props: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


TOOLS = [
    tool(
        "get_current_weather",
        city={"type": "string"},
        state={"type": "string"},
        unit={"type": "string", "enum": ["fahrenheit", "celsius"]},
        days={"type": "integer"},
    ),
    tool(
        "calculate_area",
        shape={"type": "string"},
        dimensions={"type": "object"},
        precision={"type": "integer"},
    ),
    tool(
        "test_types",
        int_param={"type": "integer"},
        float_param={"type": "float"},
        bool_param={"type": "boolean"},
        str_param={"type": "string"},
        obj_param={"type": "object"},
    ),
    tool("write_file", path={"type": "string"}, content={"type": "string"}),
]


def coder(**kwargs: Any) -> Format:
    return get("qwen3_coder", "qwen3-coder", tools=TOOLS, **kwargs)


def qwen35() -> Format:
    return get("qwen3_coder", "qwen3.5", tools=TOOLS)


def parse(name: str, fmt: Format | None = None, *, strict: bool = False) -> ParseResult:
    return (fmt or coder()).parse(load_fixture("qwen3_coder", name), strict=strict)


def args(result: ParseResult, index: int = 0) -> Any:
    return json.loads(result.tool_calls[index].arguments)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_fixture_is_split_invariant(name: str) -> None:
    fmt = qwen35() if "qwen35" in name else coder()
    assert_split_invariant(
        fmt,
        load_fixture("qwen3_coder", name),
        markers_in_arguments="markers" in name or "tags_in" in name,
    )


def test_single_call_typed_by_schema() -> None:
    result = parse("vllm_single_tool.txt")
    assert result.content is None
    assert result.tool_calls[0].name == "get_current_weather"
    assert args(result) == {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}


def test_content_before_call() -> None:
    result = parse("vllm_content_then_call.txt")
    assert result.content == "Sure! Let me check the weather for you."


def test_parallel_calls() -> None:
    result = parse("vllm_parallel.txt")
    assert [args(result, i)["city"] for i in range(2)] == ["Dallas", "Orlando"]
    assert result.content is None


def test_object_and_integer_values() -> None:
    result = parse("vllm_multiline_object_param.txt")
    assert args(result) == {
        "shape": "rectangle",
        "dimensions": {"width": 10, "height": 20},
        "precision": 2,
    }


def test_all_types() -> None:
    assert args(parse("vllm_typed_params.txt")) == {
        "int_param": 42,
        "float_param": 3.14,
        "bool_param": True,
        "str_param": "hello world",
        "obj_param": {"key": "value"},
    }


def test_numbers_stay_strings_without_schema() -> None:
    result = get("qwen3_coder").parse(load_fixture("qwen3_coder", "vllm_typed_params.txt"))
    assert args(result)["int_param"] == "42"
    assert args(result)["obj_param"] == '{"key": "value"}'


def test_value_not_fitting_its_type_stays_text() -> None:
    text = (
        "<tool_call>\n<function=calculate_area>\n<parameter=precision>\nhigh\n"
        "</parameter>\n</function>\n</tool_call>"
    )
    assert args(coder().parse(text)) == {"precision": "high"}


def test_function_without_wrapper() -> None:
    result = parse("vllm_no_wrapper.txt")
    assert result.tool_calls[0].name == "get_current_weather"
    assert args(result) == {"city": "Dallas", "state": "TX"}


def test_tags_inside_a_value_are_part_of_it() -> None:
    result = parse("rendered_markers_in_value.txt")
    assert args(result) == {
        "path": "src/x.xml",
        "content": "  <function=f></function>\n</tool_call> <parameter=y>\n",
    }


def test_truncated_call_raises() -> None:
    with pytest.raises(FormatError) as caught:
        parse("rendered_truncated.txt", strict=True)
    assert caught.value.partial is not None
    assert caught.value.partial.content == "Writing it now."


def test_qwen35_reasoning_prefilled_by_default() -> None:
    result = parse("qwen35_reasoning_call.txt", qwen35())
    assert result.reasoning == "The user wants Paris weather."
    assert result.content == "Checking."
    assert args(result) == {"city": "Paris", "days": 3}


def test_qwen35_prompt_without_think_starts_in_content() -> None:
    fmt = get("qwen3_coder", "qwen3.5", generation_prompt="<|im_start|>assistant\n")
    assert fmt.parse("hello").content == "hello"


def test_string_values_stream_as_they_arrive() -> None:
    stream = coder().stream(id_prefix="c")
    events = stream.feed("<tool_call>\n<function=write_file>\n<parameter=content>\nline one\nline")
    assert events == [
        ToolCallStarted(0, "c0", "write_file"),
        ToolCallDelta(0, "{"),
        ToolCallDelta(0, '"content": '),
        ToolCallDelta(0, '"'),
        ToolCallDelta(0, "line one\\nline"),
    ]
    assert stream.feed(" two\n</parameter>\n</function>\n</tool_call>ok") == [
        ToolCallDelta(0, " two"),
        ToolCallDelta(0, '"'),
        ToolCallDelta(0, "}"),
        TextDelta("ok"),
    ]


def test_empty_call_has_empty_object() -> None:
    result = coder().parse("<tool_call>\n<function=now>\n</function>\n</tool_call>")
    assert result.tool_calls[0].arguments == "{}"


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>\nhello</tool_call>",
        "<tool_call>\n<function=f>\nstray text\n</function>\n</tool_call>",
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\n</function>\n</tool_call>",
        "<tool_call>\n<function=f\nbroken>\n</function>\n</tool_call>",
        "<tool_call>\n<function=f>\n</function>\ntrailing",
    ],
)
def test_malformed_calls_raise(text: str) -> None:
    with pytest.raises(FormatError):
        coder().parse(text, strict=True)


_MARKERS = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "</function>",
    "<parameter=a>",
    "</parameter>",
]


@settings(max_examples=200, deadline=None)
@given(marker_soup(_MARKERS, extra=["\n", ">", "<function=", "<parameter="]))
def test_fuzz_only_toolwire_errors(text: str) -> None:
    assert_only_toolwire_errors(qwen35(), text)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fuzz_split_invariant(data: st.DataObject) -> None:
    text = data.draw(marker_soup(_MARKERS, extra=["\n", "3"]))
    cuts = data.draw(st.sets(st.integers(0, len(text))))
    assert_split_matches(qwen35(), text, cuts)


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("qwen3-coder", "rendered_markers_in_value.txt"),
        ("qwen3-coder", "vllm_content_then_call.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(get("qwen3_coder", variant), load_fixture("qwen3_coder", name))


# --------------------------------------------------------------------------- variants (issue 26)


@pytest.mark.parametrize(
    ("name", "content", "cities"),
    [
        ("variant_missing_tool_call_opener.txt", "I will check.", ["Dallas"]),
        ("variant_two_calls_missing_openers.txt", "Both requested.", ["Dallas", "Orlando"]),
    ],
)
def test_a_closing_tool_call_without_its_opener_is_not_content(
    name: str, content: str, cities: list[str]
) -> None:
    result = assert_split_invariant(coder(), load_fixture("qwen3_coder", name))
    assert result.content == content
    assert [args(result, i)["city"] for i in range(len(result.tool_calls))] == cities
    assert result.notices == ()


def test_a_call_inside_an_unclosed_think_is_a_call() -> None:
    # The family's exception to "inside reasoning only its end counts" (ARCHITECTURE.md).
    text = load_fixture("qwen3_coder", "variant_qwen35_call_in_unclosed_think.txt")
    result = assert_split_invariant(qwen35(), text)
    assert result.reasoning == "The user wants the weather in Dallas. I will call the tool."
    assert [(c.name, args(result)) for c in result.tool_calls] == [
        ("get_current_weather", {"city": "Dallas"})
    ]
    assert result.content is None


def test_a_tool_call_tag_named_in_reasoning_is_reasoning() -> None:
    text = load_fixture("qwen3_coder", "variant_qwen35_think_mentions_tool_call.txt")
    result = assert_split_invariant(qwen35(), text, markers_in_content=True)
    assert result.reasoning == "I answer with a <tool_call> block."
    assert [c.name for c in result.tool_calls] == ["get_current_weather"]
    assert result.content is None
    # The tag at the very end of the output is a call cut off there: dropped.
    cut = assert_split_invariant(qwen35(), "Thinking of <tool_call>\n", max_examples=20)
    assert cut.reasoning == "Thinking of"
    assert [n.kind for n in cut.notices] == ["truncated_call"]
