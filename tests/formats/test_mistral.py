"""Mistral [TOOL_CALLS] v3 / v11 / v13 and [THINK]: fixtures, splits, truncation, fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from toolwire.errors import FormatError
from toolwire.formats import ParseResult, for_model, get
from toolwire.formats.mistral import MistralFormat, make
from toolwire.formats.registry import family_info
from toolwire.wire.events import TextDelta, ToolCallDelta, ToolCallStarted

from .conftest import (
    ID_PREFIX,
    assert_long_output_consistent,
    assert_only_toolwire_errors,
    assert_split_invariant,
    load_fixture,
    marker_soup,
    passed_through,
)

# Non-fixture cases use fewer random splits (every fixture gets the default 200).
FEW = 25
FAMILY = "mistral"
# Generated ids are 9 letters and digits: the prefix's ("call_test_" -> "calltest"),
# then the index.
G = "calltest"

SEND = (
    '{"attachment": "report.pdf", "body": "Attached is the monthly report for your review.", '
    '"subject": "Monthly Report", "to": "finance%s@company.com%s"}'
)
WEATHER = '{"city": "San Francisco", "state": "CA", "unit": "celsius"}'

# fixture -> (variant, content, reasoning, [(name, arguments, id)])
EXPECTED: dict[str, tuple[str, str, str, list[tuple[str, str, str]]]] = {
    "v11_rendered_call_id.txt": (
        "v11",
        "",
        "",
        [
            (
                "get_n_day_weather_forecast",
                '{"location": "Paris, France", "format": "celsius", "num_days": 5}',
                "123456789",
            )
        ],
    ),
    "v13_rendered_content_and_calls.txt": (
        "v13",
        "A1",
        "",
        [("F1", "{}", f"{G}0"), ("F2", "{}", f"{G}1")],
    ),
    "v13_rendered_think.txt": ("v13", "A2", "T1", []),
    "v3_rendered_parallel.txt": (
        "v3",
        "",
        "",
        [
            ("send_email", SEND % ("1", ""), "123456789"),
            ("send_email", SEND % ("2", "."), "123456789"),
        ],
    ),
    "v7_rendered_small31.txt": (
        "v3",
        "",
        "",
        [("get_weather", '{"city": "Paris", "unit": "celsius"}', "abcdef123")],
    ),
    "v3_generated_content_before.txt": (
        "v3",
        "Hello",
        "",
        [("add", '{"a": 1, "b": 2}', f"{G}0")],
    ),
    "v3_generated_arguments_before_name.txt": (
        "v3",
        "",
        "",
        [("get_current_weather", WEATHER, f"{G}0")],
    ),
    "v3_generated_multiple.txt": (
        "v3",
        "",
        "",
        [("add", '{"a": 3.5, "b": 4}', f"{G}0"), ("get_current_weather", WEATHER, f"{G}1")],
    ),
    "v11_generated_special_tokens_skipped.txt": (
        "v11",
        "",
        "",
        [("add", '{"a": 3.5, "b": 4}', f"{G}0"), ("multiply", '{"a": 3, "b": 6}', f"{G}1")],
    ),
    "v13_generated_think_then_call.txt": (
        "v13",
        "Checking.",
        "The user wants the weather in Paris; call get_weather.",
        [("get_weather", '{"city": "Paris", "unit": "celsius"}', f"{G}0")],
    ),
    "markers_inside_value.txt": (
        "v13",
        "",
        "",
        [("echo", '{"text": "[TOOL_CALLS]x[ARGS]{} then [/THINK] and </s>"}', f"{G}0")],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_parses_as_expected_for_any_split(name: str) -> None:
    variant, content, reasoning, calls = EXPECTED[name]
    result = assert_split_invariant(
        make(variant),
        load_fixture(FAMILY, name),
        markers_in_arguments=name == "markers_inside_value.txt",
    )
    assert isinstance(result, ParseResult)
    assert result.content == (content or None)
    assert result.reasoning == reasoning
    assert [(c.name, c.arguments, c.id) for c in result.tool_calls] == calls


@pytest.mark.parametrize("variant", family_info("mistral").variants)
def test_every_variant_reads_every_call_shape(variant: str) -> None:
    # The variant guessed from a model id may be wrong; the shapes cannot be confused.
    for name, (_, content, reasoning, calls) in EXPECTED.items():
        result = make(variant).parse(load_fixture(FAMILY, name), id_prefix=ID_PREFIX)
        assert (result.content, result.reasoning) == (content or None, reasoning)
        assert [(c.name, c.arguments, c.id) for c in result.tool_calls] == calls


def test_truncated_arguments_raise_for_any_split() -> None:
    text = load_fixture(FAMILY, "truncated_arguments.txt")
    assert passed_through(assert_split_invariant(make("v11"), text))
    with pytest.raises(FormatError, match="cut off") as caught:
        make("v11").parse(text, strict=True)
    assert caught.value.fault == "model"


@pytest.mark.parametrize(
    ("model", "variant"),
    [
        ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", "v11"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "v3"),
        ("mistralai/Magistral-Small-2509", "v13"),
    ],
)
def test_models_resolve_to_variants(model: str, variant: str) -> None:
    fmt = for_model(model)
    assert isinstance(fmt, MistralFormat)
    assert fmt.variant == variant


def test_named_call_arguments_stream_incrementally() -> None:
    stream = get("mistral", "v13").stream(id_prefix="c")
    assert stream.feed("Sure.[TOOL_CALLS]get_wea") == [TextDelta("Sure.")]
    assert stream.feed('ther[ARGS]{"city": "Pa') == [
        ToolCallStarted(0, "c00000000", "get_weather"),
        ToolCallDelta(0, '{"city": "Pa'),
    ]
    assert stream.feed('ris"} ok') == [ToolCallDelta(0, 'ris"}'), TextDelta(" ok")]
    assert stream.close() == []


def test_json_array_calls_are_announced_when_their_element_closes() -> None:
    stream = get("mistral", "v3").stream(id_prefix="c")
    assert stream.feed('[TOOL_CALLS] [{"arguments": {"a": 1}, "name": "f"') == []
    assert stream.feed(', "id": "abcdefghi"}]') == [
        ToolCallStarted(0, "abcdefghi", "f"),
        ToolCallDelta(0, '{"a": 1}'),
    ]


@pytest.mark.parametrize(
    ("prompt", "text", "expected"),
    [
        ("[INST]hi[/INST][THINK]", "hmm[/THINK]Hello", ParseResult("Hello", "hmm")),
        ("[INST]hi[/INST]", "Hello", ParseResult("Hello")),
        ("[THINK]x[/THINK]", "Hello", ParseResult("Hello")),
    ],
)
def test_generation_prompt_opening_think_starts_in_reasoning(
    prompt: str, text: str, expected: ParseResult
) -> None:
    assert (
        assert_split_invariant(make("v13", generation_prompt=prompt), text, max_examples=FEW)
        == expected
    )


def test_json_encoded_string_arguments_are_unwrapped() -> None:
    text = '[TOOL_CALLS] [{"name": "f", "arguments": "{\\"a\\": 1}"}]'
    result = make("v3").parse(text)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("f", '{"a": 1}')]


def test_trailing_text_after_json_array_is_content() -> None:
    text = '[TOOL_CALLS] [{"name": "f", "arguments": {}}]\nextra trailing data'
    assert make("v3").parse(text).content == "extra trailing data"


@pytest.mark.parametrize(
    "text",
    [
        "[TOOL_CALLS]",  # nothing after the marker
        "[TOOL_CALLS]get_weat",  # cut inside the name
        "[TOOL_CALLS]f[CALL_ID]12345",  # cut inside the id
        '[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}, {"na',  # list cut off
        "[TOOL_CALLS][ARGS]{}",  # empty name
        "[TOOL_CALLS]f[ARGS]null",  # arguments not an object
        '[TOOL_CALLS] [{"arguments": {}}]',  # element without a name
        '[TOOL_CALLS] [{"name": "f", "arguments": [1]}]',  # arguments not an object
        "[TOOL_CALLS] [1, 2]",  # elements not objects
        '[TOOL_CALLS] [{"name": "f",, }]',  # invalid JSON
    ],
)
def test_truncated_or_malformed_calls_raise_format_error(text: str) -> None:
    assert passed_through(assert_split_invariant(make("v11"), text, max_examples=FEW))


def test_a_list_cut_off_keeps_its_closed_objects_as_calls() -> None:
    # The token limit hit inside the second object: the first is a call, the second is
    # dropped with a notice, and no text of either is content.
    text = '[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {"b'
    result = assert_split_invariant(make("v3"), text, max_examples=FEW)
    assert isinstance(result, ParseResult)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("f", '{"a": 1}')]
    assert [n.kind for n in result.notices] == ["truncated_call"]
    assert result.content is None
    # Malformed later in the list, the whole list is content: one unit, one verdict.
    broken = '[TOOL_CALLS] [{"name": "f", "arguments": {}}, 7]'
    assert not make("v3").parse(broken).tool_calls
    assert make("v3").parse(broken).content == broken


def test_unclosed_think_is_reasoning_and_a_dangling_marker_prefix_is_text() -> None:
    assert make("v13").parse("[THINK]still thinking") == ParseResult(None, "still thinking")
    assert make("v13").parse("a [TOOL_CA") == ParseResult("a [TOOL_CA")


@settings(max_examples=300, deadline=None)
@given(marker_soup(MistralFormat.markers, extra=("get_weather", "[", "]", '"a"')))
def test_fuzz_only_toolwire_errors(text: str) -> None:
    assert_only_toolwire_errors(make("v11"), text)


def test_unknown_variant_is_a_caller_error() -> None:
    from toolwire.errors import CallerError
    from toolwire.formats.mistral import make as make_mistral

    with pytest.raises(CallerError, match="unknown"):
        make_mistral("no-such-variant")


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("v13", "v13_generated_think_then_call.txt"),
        ("v11", "markers_inside_value.txt"),
        ("v3", "v3_rendered_parallel.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(get("mistral", variant), load_fixture("mistral", name))


def test_whitespace_around_the_named_form_is_not_name_or_arguments() -> None:
    text = load_fixture(FAMILY, "variant_v13_spaces_around_markers.txt")
    result = assert_split_invariant(make("v13"), text, max_examples=FEW)
    assert isinstance(result, ParseResult)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("get_weather", '{"city": "Paris"}'),
        ("get_time", "{}"),
    ]
