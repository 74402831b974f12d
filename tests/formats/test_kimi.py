"""Tests of the Kimi formats: K2 section markers and K3 XTML channels."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import CallerError, FormatError
from toolwire.formats import ParseResult, for_model, get
from toolwire.formats.kimi import KimiFormat
from toolwire.wire.events import ReasoningDelta, TextDelta, ToolCallDelta, ToolCallStarted

from .conftest import (
    FIXTURES,
    assert_long_output_consistent,
    assert_only_toolwire_errors,
    assert_split_invariant,
    assert_split_matches,
    load_fixture,
    marker_soup,
)

S_B, S_E = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
C_B, A_B, C_E = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
O_, C, SP = "<|open|>", "<|close|>", "<|sep|>"
K3_MESSAGE = '<|open|>message role="assistant"<|sep|>'

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]

# fixture -> (variant, generation prompt); None means the variant's default prompt.
FIXTURE_SETUP: dict[str, tuple[str, str | None]] = {
    "k2_vllm_single.txt": ("k2", None),
    "k2_thinking_rendered.txt": ("k2", None),
    "k2_vllm_multiline.txt": ("k2", None),
    "k2_marker_in_value.txt": ("k2", None),
    "k3_rendered.txt": ("k3", K3_MESSAGE),
    "k3_generated.txt": ("k3", None),
    "k3_json_block.txt": ("k3", K3_MESSAGE + f"{O_}response{SP}"),
    "k3_vllm_message_close.txt": ("k3", K3_MESSAGE + f"{O_}response{SP}"),
}


def kimi(variant: str = "k2", prompt: str | None = None, tools: Any = TOOLS) -> KimiFormat:
    fmt = get("kimi", variant, tools=tools, generation_prompt=prompt)
    assert isinstance(fmt, KimiFormat)
    return fmt


def parse(name: str) -> ParseResult:
    variant, prompt = FIXTURE_SETUP[name]
    return kimi(variant, prompt).parse(load_fixture("kimi", name))


def args(result: ParseResult, index: int) -> object:
    return json.loads(result.tool_calls[index].arguments)


def test_every_fixture_file_is_listed() -> None:
    listed = (FIXTURES / "kimi").glob("*.txt")  # variant_*: test_contract.py
    assert sorted(p.name for p in listed if not p.name.startswith("variant_")) == sorted(
        FIXTURE_SETUP
    )


@pytest.mark.parametrize("name", sorted(FIXTURE_SETUP))
def test_every_fixture_is_split_invariant(name: str) -> None:
    variant, prompt = FIXTURE_SETUP[name]
    outcome = assert_split_invariant(
        kimi(variant, prompt),
        load_fixture("kimi", name),
        markers_in_arguments="marker_in_value" in name or "json_block" in name,
    )
    assert isinstance(outcome, ParseResult)


# --------------------------------------------------------------------------- K2


def test_k2_single_call_keeps_the_format_id() -> None:
    result = parse("k2_vllm_single.txt")
    assert result.content == "I'll check."
    call = result.tool_calls[0]
    assert (call.id, call.name, call.arguments) == (
        "functions.get_weather:0",
        "get_weather",
        '{"city": "Beijing"}',
    )


def test_k2_thinking_rendered_history() -> None:
    result = parse("k2_thinking_rendered.txt")
    assert result.reasoning == "Weather and news."
    assert result.content == "Let me check."
    assert [c.id for c in result.tool_calls] == ["functions.get_weather:0", "functions.get_news:1"]
    assert args(result, 1) == {"topic": "technology"}


def test_k2_multiline_json_angle_brackets_and_no_prefix() -> None:
    result = parse("k2_vllm_multiline.txt")
    assert result.content == "Formatted."
    assert result.tool_calls[0].arguments == '{\n  "name": "test",\n  "value": 123\n}'
    assert args(result, 1) == {"html": "<div>content</div>"}
    assert (result.tool_calls[2].name, result.tool_calls[2].id) == ("get_weather", "get_weather:2")


def test_k2_marker_text_inside_json_is_value() -> None:
    result = parse("k2_marker_in_value.txt")
    assert args(result, 0) == {"text": f"a {C_E}{S_E} b"}


def test_k2_streams_arguments_before_the_call_ends() -> None:
    stream = kimi().stream()
    events = stream.feed(f'Hi{S_B}{C_B}functions.get_weather:0{A_B}{{"city"')
    assert events == [
        TextDelta("Hi"),
        ToolCallStarted(0, "functions.get_weather:0", "get_weather"),
        ToolCallDelta(0, '{"city"'),
    ]
    assert stream.feed(f': "Rome"}}{C_E}{S_E}') == [ToolCallDelta(0, ': "Rome"}')]


@pytest.mark.parametrize(
    "text",
    [
        f"{S_B}{C_B}0{A_B}{{}}{C_E}{S_E}",
        f"{S_B}{C_B}functions.f.0{A_B}{{}}{C_E}{S_E}",
        f"{S_B}{C_B}functions.f:0{C_E}{S_E}",
        f"{S_B}{C_B}functions.f:0{A_B}[1]{C_E}{S_E}",
        f"{S_B}{C_B}functions.f:0{A_B}{{}} x{C_E}{S_E}",
    ],
)
def test_k2_malformed_calls_raise(text: str) -> None:
    with pytest.raises(FormatError):
        kimi().parse(text, strict=True)


def test_k2_truncated_call_raises_with_partial() -> None:
    text = load_fixture("kimi", "k2_vllm_single.txt")
    with pytest.raises(FormatError, match="truncated") as info:
        kimi().parse(text[: text.index("Beijing")], strict=True)
    assert info.value.partial is not None
    assert info.value.partial.content == "I'll check."


def test_k2_missing_section_end_is_accepted() -> None:
    text = f"{S_B}{C_B}functions.f:0{A_B}{{}}{C_E}<|im_end|>"
    result = kimi().parse(text)
    assert result.tool_calls[0].arguments == "{}"
    assert result.content is None


# --------------------------------------------------------------------------- K3


def test_k3_rendered_history() -> None:
    result = parse("k3_rendered.txt")
    assert result.reasoning == "Weather, two cities."
    assert result.content == "Checking both."
    assert [c.name for c in result.tool_calls] == ["get_weather", "get_weather"]
    assert args(result, 0) == {"city": "Seoul", "days": 3}
    assert args(result, 1) == {"city": 'New & "Old" York', "metric": True}


def test_k3_default_prompt_starts_in_the_think_channel() -> None:
    result = parse("k3_generated.txt")
    assert result.reasoning == "Run it."
    assert result.content == "Running."
    assert result.tool_calls[0].arguments == '{"code": "print(1)", "opts": {"a":1}}'


def test_k3_json_block_call_body() -> None:
    result = parse("k3_json_block.txt")
    assert result.content == "On it."
    assert args(result, 0) == {"q": f"{C}json{SP} inside", "n": 2}


def test_k3_message_close_is_not_content() -> None:
    assert parse("k3_vllm_message_close.txt") == ParseResult("Hello", "", ())


def test_k3_attribute_unescaping_and_untagged_values_typed_by_schema() -> None:
    text = (
        f'{O_}tools{SP}{O_}call tool="get_&quot;weather&quot;" index="1"{SP}'
        f'{O_}argument key="x&amp;y" type="null"{SP}null{C}argument{SP}{C}call{SP}'
        f'{O_}call tool="get_weather" index="2"{SP}'
        f'{O_}argument key="days"{SP}4{C}argument{SP}{C}call{SP}{C}tools{SP}'
    )
    result = kimi("k3", K3_MESSAGE).parse(text)
    assert result.tool_calls[0].name == 'get_"weather"'
    assert args(result, 0) == {"x&y": None}
    assert args(result, 1) == {"days": 4}


def test_k3_string_values_stream() -> None:
    stream = kimi("k3", K3_MESSAGE).stream(id_prefix="c")
    events = stream.feed(
        f'{O_}think{SP}hm{C}think{SP}{O_}tools{SP}{O_}call tool="f" index="1"{SP}'
        f'{O_}argument key="a" type="string"{SP}par'
    )
    assert events == [
        ReasoningDelta("hm"),
        ToolCallStarted(0, "c0", "f"),
        ToolCallDelta(0, '{"a": "par'),
    ]


@pytest.mark.parametrize(
    "body",
    [
        f'{O_}argument key="a" type="number"{SP}twelve{C}argument{SP}',
        f'{O_}argument type="string"{SP}x{C}argument{SP}',
        f'{O_}argument key="a" type="string"{SP}1{C}argument{SP}'
        f'{O_}argument key="a" type="string"{SP}2{C}argument{SP}',
        f'{O_}argument key="a" type="string"{SP}1{C}argument{SP}{O_}json type="object"{SP}{{}}'
        f"{C}json{SP}",
        "stray",
    ],
)
def test_k3_malformed_calls_raise(body: str) -> None:
    text = f'{O_}tools{SP}{O_}call tool="f" index="1"{SP}{body}{C}call{SP}{C}tools{SP}'
    with pytest.raises(FormatError):
        kimi("k3", K3_MESSAGE).parse(text, strict=True)


def test_k3_call_without_tool_attribute_raises() -> None:
    text = f'{O_}tools{SP}{O_}call index="1"{SP}{C}call{SP}{C}tools{SP}'
    with pytest.raises(FormatError):
        kimi("k3", K3_MESSAGE).parse(text, strict=True)


def test_k3_truncated_call_raises() -> None:
    text = load_fixture("kimi", "k3_rendered.txt")
    with pytest.raises(FormatError, match="truncated"):
        kimi("k3", K3_MESSAGE).parse(text[: text.index("Seoul")], strict=True)


# --------------------------------------------------------------------------- misc


def test_unknown_variant() -> None:
    with pytest.raises(CallerError):
        get("kimi", "k1.5")


@pytest.mark.parametrize(
    ("model", "variant"),
    [
        ("moonshotai/Kimi-K2-Instruct", "k2"),
        ("moonshotai/Kimi-K2-Thinking", "k2"),
        ("moonshotai/Kimi-K3", "k3"),
    ],
)
def test_for_model(model: str, variant: str) -> None:
    assert for_model(model).variant == variant


@pytest.mark.parametrize("variant", ["k2", "k3"])
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_fuzz_marker_soup_only_toolwire_errors(variant: str, data: st.DataObject) -> None:
    fmt = kimi(variant, K3_MESSAGE if variant == "k3" else None)
    extra = [
        "functions.f:0",
        ' tool="f"',
        ' key="a" type="string"',
        ' type="number"',
        "<|open|>call",
        "<|open|>argument",
        "<|open|>json",
    ]
    text = data.draw(marker_soup(fmt.markers, extra))
    assert_only_toolwire_errors(fmt, text)
    cuts = data.draw(st.sets(st.integers(min_value=1, max_value=max(1, len(text) - 1))))
    assert_split_matches(fmt, text, cuts)


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("k2", "k2_marker_in_value.txt"),
        ("k3", "k3_generated.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(get("kimi", variant), load_fixture("kimi", name))
