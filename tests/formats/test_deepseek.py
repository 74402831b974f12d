"""Tests of the DeepSeek formats: V3 / R1 / V3.1 markers and V3.2 / V4 DSML."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import CallerError, DecoderStateError, FormatError
from toolwire.formats import ParseResult, for_model, get
from toolwire.formats.deepseek import DSML_BLOCKS, DSML_GAPS, DSML_SPELLINGS, DeepSeekFormat
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

TCB, TCE = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CB, CE, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
D = "｜DSML｜"

# fixture -> (variant, generation prompt); None means the variant's default prompt.
FIXTURE_SETUP: dict[str, tuple[str, str | None]] = {
    "v3_rendered_two_calls.txt": ("v3", None),
    "r1_generated_thinking.txt": ("r1", "<｜Assistant｜>"),
    "r1_prefilled_thinking.txt": ("r1", None),
    "r1_merged_marker.txt": ("r1", "<｜Assistant｜>"),
    "v31_rendered.txt": ("v3.1", None),
    "v31_vllm_prefix_suffix.txt": ("v3.1", None),
    "v31_thinking_generated.txt": ("v3.1", "<｜Assistant｜><think>"),
    "v31_marker_in_value.txt": ("v3.1", None),
    "v32_rendered.txt": ("v3.2", "<｜Assistant｜><think>"),
    "v32_vllm_no_separator.txt": ("v3.2", None),
    "v4_rendered.txt": ("v4", None),
    "v4_vllm.txt": ("v4", None),
    "v4_marker_in_value.txt": ("v4", None),
}


def fixture(name: str) -> tuple[DeepSeekFormat, str]:
    variant, prompt = FIXTURE_SETUP[name]
    fmt = get("deepseek", variant, generation_prompt=prompt)
    assert isinstance(fmt, DeepSeekFormat)
    return fmt, load_fixture("deepseek", name)


def parse(name: str) -> ParseResult:
    fmt, text = fixture(name)
    return fmt.parse(text)


def args(result: ParseResult, index: int) -> object:
    return json.loads(result.tool_calls[index].arguments)


def test_every_fixture_file_is_listed() -> None:
    listed = (FIXTURES / "deepseek").glob("*.txt")  # variant_*: test_contract.py
    assert sorted(p.name for p in listed if not p.name.startswith("variant_")) == sorted(
        FIXTURE_SETUP
    )


@pytest.mark.parametrize("name", sorted(FIXTURE_SETUP))
def test_every_fixture_is_split_invariant(name: str) -> None:
    fmt, text = fixture(name)
    outcome = assert_split_invariant(fmt, text, markers_in_arguments="marker_in_value" in name)
    assert isinstance(outcome, ParseResult)
    assert outcome.tool_calls, "every fixture holds at least one call"


# --------------------------------------------------------------------------- V3 / R1


def test_v3_rendered_two_calls() -> None:
    result = parse("v3_rendered_two_calls.txt")
    assert result.content is None
    assert result.reasoning == ""
    assert [c.name for c in result.tool_calls] == ["get_weather", "get_time"]
    assert args(result, 0) == {"location": "Paris", "days": 3}
    assert args(result, 1) == {"tz": "Europe/Paris"}
    # Arguments are the exact JSON text the model wrote.
    assert result.tool_calls[0].arguments == '{"location": "Paris", "days": 3}'


def test_r1_writes_its_own_think() -> None:
    result = parse("r1_generated_thinking.txt")
    assert result.reasoning == "I'm\nthinking"
    assert result.content is None
    assert result.tool_calls[0].name == "special_function"
    assert args(result, 0) == {"arg1": 1}


def test_r1_default_prompt_prefills_think() -> None:
    result = parse("r1_prefilled_thinking.txt")
    assert result.reasoning == "The user wants the weather in Paris."
    assert result.content == "Let me look it up."
    assert args(result, 0) == {"location": "Paris"}


def test_r1_merged_calls_token() -> None:
    result = parse("r1_merged_marker.txt")
    assert result.content is None
    assert [c.name for c in result.tool_calls] == ["special_function"]


def test_v3_accepts_arguments_without_code_fence() -> None:
    text = f'{TCB}{CB}function{SEP}f\n{{"a": 1}}{CE}{TCE}'
    assert args(get("deepseek", "v3").parse(text), 0) == {"a": 1}


# --------------------------------------------------------------------------- V3.1


def test_v31_rendered() -> None:
    result = parse("v31_rendered.txt")
    assert result.content == "Checking both."
    assert [c.name for c in result.tool_calls] == ["get_weather", "get_time"]
    assert result.tool_calls[1].arguments == '{"tz": "Asia/Tokyo"}'


def test_v31_text_after_the_section_is_content() -> None:
    result = parse("v31_vllm_prefix_suffix.txt")
    assert result.content == "some prefix text some suffix text"
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("foo", '{"x":1}'),
        ("bar", '{"y":2}'),
    ]


def test_v31_thinking_prompt_starts_in_reasoning() -> None:
    result = parse("v31_thinking_generated.txt")
    assert result.reasoning == "Need the weather first."
    assert result.content == "Sure."
    assert args(result, 0) == {"location": "Tokyo", "unit": "celsius"}


def test_v31_marker_text_inside_a_json_string_is_value() -> None:
    result = parse("v31_marker_in_value.txt")
    assert args(result, 0) == {"path": "a.md", "text": f'end: {CE}{TCE} "q" }}'}


def test_v31_does_not_take_the_v3_layout() -> None:
    text = f"{TCB}{CB}function{SEP}get_weather\n```json\n{{}}\n```{CE}{TCE}"
    with pytest.raises(FormatError):
        get("deepseek", "v3.1").parse(text, strict=True)


# --------------------------------------------------------------------------- DSML


def test_v32_rendered_thinking_turn() -> None:
    result = parse("v32_rendered.txt")
    assert result.reasoning == "Hangzhou weather for 3 days."
    # The "\n\n" before the block is the template's, not the answer's.
    assert result.content == "Let me check."
    assert args(result, 0) == {"location": "Hangzhou", "days": 3}
    assert args(result, 1) == {"tz": "Asia/Shanghai"}


def test_v32_block_without_separator_and_json_values() -> None:
    result = parse("v32_vllm_no_separator.txt")
    assert result.content is None
    assert result.tool_calls[0].arguments == '{"location": "Seoul", "units": ["c", "f"]}'


def test_v4_rendered_typed_by_string_attribute() -> None:
    result = parse("v4_rendered.txt")
    assert result.content == "I'll search and compute."
    assert args(result, 0) == {
        "query": "deepseek v4\n  release notes",
        "filters": {"year": 2025, "lang": ["en", "zh"]},
    }
    assert args(result, 1) == {"shape": "circle", "precision": 2, "exact": False}


def test_v4_vllm_shape() -> None:
    result = parse("v4_vllm.txt")
    assert result.content == "Let me check."
    assert args(result, 0) == {"location": "Beijing", "unit": "celsius"}


def test_v4_marker_text_inside_a_string_value_is_value() -> None:
    result = parse("v4_marker_in_value.txt")
    assert args(result, 0) == {"text": f'use <{D}invoke name="x"> and </{D}tool_calls> "quoted"\n'}


@pytest.mark.parametrize("variant", ["v3.2", "v4"])
@pytest.mark.parametrize("block", ["function_calls", "tool_calls"])
def test_dsml_block_names_are_read_by_both_variants(variant: str, block: str) -> None:
    # V3.2 writes function_calls and V4 tool_calls; point releases and fine-tunes mix
    # them (ml-explore/mlx-lm#1337 matches the block by prefix for that reason).
    text = f'<{D}{block}>\n<{D}invoke name="f">\n</{D}invoke>\n</{D}{block}>'
    result = assert_split_invariant(get("deepseek", variant), text, max_examples=40)
    assert [c.name for c in result.tool_calls] == ["f"]
    assert result.content is None


@pytest.mark.parametrize("variant", ["v3.2", "v4"])
@pytest.mark.parametrize("prefix", sorted({t + g for t in DSML_SPELLINGS for g in DSML_GAPS}))
@pytest.mark.parametrize("block", DSML_BLOCKS)
def test_every_dsml_spelling_in_the_table_is_read(variant: str, prefix: str, block: str) -> None:
    # One table, every row: the token's spellings, with or without V4.1's space, and
    # every block name; the tags inside follow the opener's spelling.
    text = (
        f'Hi.\n\n<{prefix}{block}>\n<{prefix}invoke name="f">\n'
        f'<{prefix}parameter name="a" string="true">x</{prefix}parameter>\n'
        f"</{prefix}invoke>\n</{prefix}{block}>"
    )
    result = assert_split_invariant(get("deepseek", variant), text, max_examples=8)
    assert [(c.name, args(result, 0)) for c in result.tool_calls] == [("f", {"a": "x"})]
    assert result.content == "Hi."
    cut = get("deepseek", variant).parse(text[: text.index("x<")])
    assert cut.content == "Hi." and cut.tool_calls == ()
    assert [n.kind for n in cut.notices] == ["truncated_call"]


def test_dsml_invoke_without_parameters() -> None:
    text = f'<{D}tool_calls>\n<{D}invoke name="now">\n</{D}invoke>\n</{D}tool_calls>'
    assert get("deepseek", "v4").parse(text).tool_calls[0].arguments == "{}"


@pytest.mark.parametrize(
    "body",
    [
        f'<{D}parameter name="a" string="false">not json</{D}parameter>',
        f'<{D}parameter name="a" string="false">NaN</{D}parameter>',
        f'<{D}parameter name="a" string="maybe">1</{D}parameter>',
        f'<{D}parameter name="a" string="true">1</{D}parameter>'
        f'<{D}parameter name="a" string="true">2</{D}parameter>',
        "stray text",
    ],
)
def test_dsml_malformed_parameters_raise(body: str) -> None:
    text = f'<{D}tool_calls>\n<{D}invoke name="f">\n{body}\n</{D}invoke>\n</{D}tool_calls>'
    with pytest.raises(FormatError):
        get("deepseek", "v4").parse(text, strict=True)


def test_dsml_string_value_streams_before_it_closes() -> None:
    stream = get("deepseek", "v4").stream(id_prefix="c")
    events = stream.feed(
        f'<{D}tool_calls>\n<{D}invoke name="f">\n<{D}parameter name="q" string="true">hel'
    )
    assert ToolCallStarted(0, "c0", "f") in events
    assert "".join(e.arguments for e in events if isinstance(e, ToolCallDelta)) == '{"q": "hel'


# --------------------------------------------------------------------------- truncation & errors


@pytest.mark.parametrize(
    "name",
    ["v3_rendered_two_calls.txt", "v31_rendered.txt", "v32_rendered.txt", "v4_rendered.txt"],
)
def test_truncated_inside_a_call_raises_with_partial(name: str) -> None:
    fmt, text = fixture(name)
    marker = CB if "DSML" not in text else f"<{D}parameter"
    cut = text.index(marker) + len(marker) + 12
    with pytest.raises(FormatError, match="truncated") as info:
        fmt.parse(text[:cut], strict=True)
    assert info.value.partial is not None
    assert info.value.fault == "model"


def test_truncated_right_after_the_section_opens_raises() -> None:
    with pytest.raises(FormatError):
        get("deepseek", "v3.1").parse(f"Let me look.{TCB}", strict=True)


def test_missing_section_end_after_complete_calls_is_accepted() -> None:
    text = f"{TCB}{CB}f{SEP}{{}}{CE}"
    assert get("deepseek", "v3.1").parse(text).tool_calls[0].name == "f"


@pytest.mark.parametrize(
    "text",
    [
        f"Let me look that up.{TCB}get_weather",
        f'{TCB}foo{SEP}{{"x":1}}{TCE}',
        f"{TCB}{CB}{SEP}{{}}{CE}{TCE}",
        f"{TCB}{CB}f{SEP}[1, 2]{CE}{TCE}",
        f'{TCB}{CB}f{SEP}{{"a": 1}} trailing{CE}{TCE}',
        f"{TCB}{CB}f{CE}{TCE}",
    ],
)
def test_malformed_v31_calls_raise(text: str) -> None:
    with pytest.raises(FormatError):
        get("deepseek", "v3.1").parse(text, strict=True)


def test_content_streams_before_the_call_and_holds_only_a_marker_prefix() -> None:
    stream = get("deepseek", "v3.1").stream(id_prefix="c")
    assert stream.feed("Hello <｜tool▁ca") == [TextDelta("Hello")]  # the space may be a separator
    events = stream.feed(f'lls▁begin｜>{CB}get_weather{SEP}{{"city": "Par')
    assert events == [ToolCallStarted(0, "c0", "get_weather"), ToolCallDelta(0, '{"city": "Par')]
    assert stream.feed(f'is"}}{CE}{TCE}') == [ToolCallDelta(0, 'is"}')]
    assert stream.close() == []


def test_eos_token_is_dropped() -> None:
    assert get("deepseek", "v3").parse("Hi<｜end▁of▁sentence｜>").content == "Hi"


def test_unclosed_reasoning_is_all_reasoning() -> None:
    result = get("deepseek", "r1").parse("still thinking")
    assert result == ParseResult(None, "still thinking", ())


def test_think_only_opens_at_the_start() -> None:
    result = get("deepseek", "v3").parse("a <think>b</think>")
    assert result.content == "a <think>b</think>"


def test_stream_misuse() -> None:
    stream = get("deepseek", "v3").stream()
    stream.close()
    with pytest.raises(DecoderStateError):
        stream.feed("x")


def test_unknown_variant() -> None:
    with pytest.raises(CallerError, match="known variants"):
        get("deepseek", "v9")


@pytest.mark.parametrize(
    ("model", "variant"),
    [
        ("deepseek-ai/DeepSeek-V3.1", "v3.1"),
        ("deepseek-ai/DeepSeek-V3-0324", "v3"),
        ("deepseek-ai/DeepSeek-R1-0528", "r1"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "v3.2"),
        ("deepseek-ai/DeepSeek-V4-Flash", "v4"),
    ],
)
def test_for_model(model: str, variant: str) -> None:
    fmt = for_model(model)
    assert isinstance(fmt, DeepSeekFormat)
    assert fmt.variant == variant


# --------------------------------------------------------------------------- fuzz


@pytest.mark.parametrize("variant", ["v3", "v3.1", "v4"])
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_fuzz_marker_soup_only_toolwire_errors(variant: str, data: st.DataObject) -> None:
    fmt = get("deepseek", variant)
    extra = ["function", "\n```json\n", "```", ' name="f"', ' string="true"', ">", "\n\n"]
    text = data.draw(marker_soup(fmt.markers, extra))
    assert_only_toolwire_errors(fmt, text)
    cuts = data.draw(st.sets(st.integers(min_value=1, max_value=max(1, len(text) - 1))))
    assert_split_matches(fmt, text, cuts)


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("v3", "v3_rendered_two_calls.txt"),
        ("v3.1", "v31_marker_in_value.txt"),
        ("v4", "v4_marker_in_value.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(get("deepseek", variant), load_fixture("deepseek", name))
