"""gpt-oss Harmony: fixtures, split invariance, prompts, truncation and fuzzing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from toolwire.errors import FormatError
from toolwire.formats import ParseResult, get
from toolwire.formats.harmony import HarmonyFormat, make
from toolwire.wire.events import ReasoningDelta, TextDelta, ToolCallDelta, ToolCallStarted

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
FAMILY = "harmony"

# fixture -> (generation_prompt, content, reasoning, [(name, arguments)])
EXPECTED: dict[str, tuple[str | None, str, str, list[tuple[str, str]]]] = {
    "reasoning_final.txt": (
        None,
        "2 + 2 = 4.",
        'User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.',
        [],
    ),
    "tool_call_channel_first.txt": (
        None,
        "",
        "Need to use function get_weather.",
        [("get_weather", '{"location":"San Francisco"}')],
    ),
    "tool_call_recipient_in_header.txt": (
        "",
        "",
        "",
        [("get_weather", '{"location": "Tokyo"}')],
    ),
    "tool_call_constrain_adjacent.txt": (
        "",
        "",
        "",
        [("get_weather", '{"latitude":48.8566,"longitude":2.3522}')],
    ),
    "role_header_call_no_stop_token.txt": (
        "<|start|>assistant",
        "",
        "",
        [("special_function", '{"arg1": 1}')],
    ),
    "commentary_preamble_then_call.txt": (
        None,
        "Hello, world!\nWhat's up?",
        "I'm\nthinking",
        [("special_function", '{"arg1": 1}')],
    ),
    "preamble_action_plan.txt": (
        None,
        "**Action plan**:\n1. Generate an HTML file\n2. Generate a JavaScript for the "
        "Node.js server\n3. Start the server\n---\nWill start executing the plan step by step",
        "{long chain of thought}",
        [("generate_file", '{"template": "basic_html", "path": "index.html"}')],
    ),
    "rendered_history_tool_call.txt": (
        "",
        "",
        "We need to call get_weather for NYC.",
        [("get_weather", '{"city": "New York City"}')],
    ),
    "rendered_history_first_release.txt": (
        "",
        "It is 20 degrees and sunny in New York City.",
        "We need to call get_weather for NYC.",
        [("get_weather", '{"city": "New York City"}')],
    ),
    "several_calls.txt": (
        "",
        "",
        'User asks: "What is the weather in Tokyo?" based on their location. We need to '
        "use get_current_weather tool and get_user_location tool.",
        [
            ("get_current_weather", '{"location": "Tokyo"}'),
            ("get_user_location", '{"location": "Tokyo"}'),
            ("no_content_type", '{"location": "Tokyo"}'),
            ("not_json_no_content_type", "foo"),
            ("empty_args", "{}"),
            ("no_args", "{}"),
        ],
    ),
    "markers_inside_value.txt": (
        None,
        "",
        "Quote the markers.",
        [("echo", '{"text": "ends with <|call|> or <|end|>, starts with <|start|>", "n": 1}')],
    ),
    "built_in_tool_on_analysis.txt": (
        None,
        "",
        "I'm\nthinking",
        [("special_function", '{"arg1": 1}')],
    ),
}
MARKERS_IN_ARGUMENTS = {"markers_inside_value.txt"}


def _fmt(prompt: str | None) -> HarmonyFormat:
    return make("gpt-oss", generation_prompt=prompt)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_parses_as_expected_for_any_split(name: str) -> None:
    prompt, content, reasoning, calls = EXPECTED[name]
    fmt = _fmt(prompt)
    result = assert_split_invariant(
        fmt, load_fixture(FAMILY, name), markers_in_arguments=name in MARKERS_IN_ARGUMENTS
    )
    assert isinstance(result, ParseResult)
    assert result.content == (content or None)
    assert result.reasoning == reasoning
    assert [(c.name, c.arguments) for c in result.tool_calls] == calls
    assert [c.id for c in result.tool_calls] == [f"{ID_PREFIX}{i}" for i in range(len(calls))]


def test_truncated_arguments_raise_for_any_split() -> None:
    text = load_fixture(FAMILY, "truncated_arguments.txt")
    assert passed_through(assert_split_invariant(_fmt(None), text))
    with pytest.raises(FormatError, match="cut off") as caught:
        _fmt(None).parse(text, strict=True)
    partial = caught.value.partial
    assert partial is not None and partial.reasoning == "I'm\nthinking"
    assert caught.value.fault == "model"


def test_registry_resolves_gpt_oss() -> None:
    fmt = get("harmony")
    assert isinstance(fmt, HarmonyFormat)
    assert fmt.variant == "gpt-oss"
    assert fmt.generation_prompt is None and fmt.prompt == "<|start|>assistant"


def test_arguments_stream_before_the_call_ends() -> None:
    stream = _fmt(None).stream(id_prefix="c")
    events = stream.feed('<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": ')
    assert events[0] == ToolCallStarted(0, "c0", "f")
    assert events[1:] == [ToolCallDelta(0, '{"a": ')]
    assert stream.feed('"x"}') == [ToolCallDelta(0, '"x"}')]
    assert stream.feed("<|call|>") == []
    assert stream.close() == []


def test_content_is_emitted_as_soon_as_it_cannot_be_a_marker() -> None:
    stream = _fmt(None).stream()
    assert stream.feed("<|channel|>final<|message|>Hi <") == [TextDelta("Hi")]  # separator?
    assert stream.feed("b> there<|") == [TextDelta(" <b> there")]
    assert stream.feed("return|>") == []
    assert stream.close() == []


@pytest.mark.parametrize(
    ("prompt", "text", "expected"),
    [
        # A prompt that pre-fills the final channel: the output is the answer itself.
        ("<|start|>assistant<|channel|>final<|message|>", "Done.", ParseResult("Done.")),
        # A prompt that opened the analysis channel: the output starts in reasoning.
        (
            "<|start|>assistant<|channel|>analysis<|message|>",
            "think<|end|><|start|>assistant<|channel|>final<|message|>ok",
            ParseResult("ok", "think"),
        ),
        # Empty prompt: the output carries its own <|start|>assistant.
        ("", "<|start|>assistant<|channel|>final<|message|>ok<|return|>", ParseResult("ok")),
        # The output repeats the prompt's <|start|>: the header restarts cleanly.
        (None, "<|start|>assistant<|channel|>final<|message|>ok", ParseResult("ok")),
    ],
)
def test_generation_prompt_sets_the_start_state(
    prompt: str | None, text: str, expected: ParseResult
) -> None:
    assert assert_split_invariant(_fmt(prompt), text, max_examples=FEW) == expected


def test_output_without_harmony_markers_is_content() -> None:
    assert _fmt(None).parse("plain answer, no channels") == ParseResult("plain answer, no channels")


def test_text_between_messages_is_kept_as_content() -> None:
    text = "<|channel|>final<|message|>a<|end|>\n<|start|>assistant<|channel|>final<|message|>b"
    assert assert_split_invariant(_fmt(None), text, max_examples=FEW) == ParseResult("a\nb")


def test_built_in_recipient_offered_as_a_tool_keeps_its_full_name() -> None:
    text = '<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>'
    tools = [{"type": "function", "function": {"name": "browser.search", "parameters": {}}}]
    result = make("gpt-oss", tools=tools).parse(text)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("browser.search", '{"query": "x"}')
    ]


@pytest.mark.parametrize("recipient", ["python", "browser.search", "browser.open"])
def test_built_in_recipient_not_offered_is_not_a_call(recipient: str) -> None:
    # gpt-oss's own tools (openai/harmony: the browser and python namespaces) are the
    # model's business, not a call of the caller's: the message is reasoning.
    text = f"<|channel|>analysis to={recipient} code<|message|>print(1)<|call|>"
    result = assert_split_invariant(_fmt(None), text, max_examples=FEW)
    assert result.tool_calls == ()
    assert result.reasoning == "print(1)"


def test_missing_end_before_next_start_closes_the_message() -> None:
    text = "<|channel|>analysis<|message|>r<|start|>assistant<|channel|>final<|message|>c"
    assert assert_split_invariant(_fmt(None), text, max_examples=FEW) == ParseResult("c", "r")


@pytest.mark.parametrize(
    "text",
    [
        "<|channel|>commentary to=functions.f <|constrain|>json",  # header cut off
        "<|channel|>commentary to=functions.f <|constrain|>json<|message|>",  # no body yet
        "<|channel|>commentary to=functions.f<|message|>  ",  # only spaces
        '<|channel|>commentary to=functions.f<|message|>{"a": "<|call|>',  # inside a string
        "<|channel|>commentary to=functions.<|message|>{}<|call|>",  # no function name
        "<|channel|>commentary to=functions.f<|end|>",  # header ended without a body
    ],
)
def test_truncated_or_malformed_calls_raise_format_error(text: str) -> None:
    assert passed_through(assert_split_invariant(_fmt(None), text, max_examples=FEW))


def test_truncated_header_of_a_text_message_is_dropped() -> None:
    result = _fmt(None).parse("<|channel|>analysis<|message|>r<|end|><|start|>assistant<|chan")
    assert result == ParseResult(None, "r")


def test_events_convert_to_openai_deltas() -> None:
    from toolwire.formats import to_openai_delta

    events = (
        _fmt(None)
        .stream(id_prefix="x")
        .feed(
            "<|channel|>analysis<|message|>r<|end|><|start|>assistant"
            "<|channel|>commentary to=functions.f<|message|>{}"
        )
    )
    assert [to_openai_delta(e) for e in events] == [
        {"reasoning_content": "r"},
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "x0",
                    "type": "function",
                    "function": {"name": "f", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]},
    ]
    assert isinstance(events[0], ReasoningDelta)


def test_arguments_are_valid_json_in_every_json_fixture() -> None:
    for name, (prompt, _, _, calls) in EXPECTED.items():
        result = _fmt(prompt).parse(load_fixture(FAMILY, name))
        for call, (_, arguments) in zip(result.tool_calls, calls):
            if arguments.startswith("{"):
                json.loads(call.arguments)


@settings(max_examples=300, deadline=None)
@given(marker_soup(HarmonyFormat.markers, extra=("to=functions.f", "analysis", "final", " json")))
def test_fuzz_only_toolwire_errors(text: str) -> None:
    assert_only_toolwire_errors(_fmt(None), text)


def test_broken_header_right_after_a_call_gives_its_own_text_back() -> None:
    """Arguments ended by the next message's <|start|>: that marker belongs to the next
    header, so when the header breaks its text is given back from the marker on, split
    anywhere (a stream used to fail an internal check here)."""
    text = "<|start|>to=functions.f<|message|><|start|>to=functions.f<|end|>"
    result = assert_split_invariant(_fmt(None), text, max_examples=FEW)
    assert isinstance(result, ParseResult)
    assert [call.name for call in result.tool_calls] == ["f"]
    assert result.content == "<|start|>to=functions.f<|end|>"


@pytest.mark.parametrize(
    "before", ["", '<|channel|>commentary to=functions.f<|message|>{"a":1}<|call|>']
)
def test_call_without_a_function_name_gives_back_its_own_text_only(before: str) -> None:
    """A recipient ``to=functions.`` breaks the call at its header: the text from that
    header on is content, not the messages before it (reported already as reasoning),
    whole or streamed in any split."""
    broken = "<|start|>assistant to=functions.<|channel|>commentary json<|message|>{}<|call|>"
    text = before + "<|start|>assistant<|channel|>analysis<|message|>thinking<|end|>" + broken
    result = assert_split_invariant(_fmt(None), text, max_examples=FEW)
    assert isinstance(result, ParseResult)
    assert result.content == broken
    assert result.reasoning == "thinking"
    assert [call.name for call in result.tool_calls] == (["f"] if before else [])
    assert [notice.kind for notice in result.notices] == ["malformed_call"]


def test_unknown_variant_is_a_caller_error() -> None:
    from toolwire.errors import CallerError
    from toolwire.formats.harmony import make as make_harmony

    with pytest.raises(CallerError, match="unknown"):
        make_harmony("no-such-variant")


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("gpt-oss", "markers_inside_value.txt"),
        ("gpt-oss", "commentary_preamble_then_call.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(get("harmony", variant), load_fixture("harmony", name))


def test_whitespace_around_json_arguments_is_not_theirs() -> None:
    # Before the value and before the end marker it is the template's; between the
    # value and more text it is kept (that text makes the arguments invalid anyway).
    fmt = make("gpt-oss")
    text = load_fixture(FAMILY, "variant_whitespace_around_arguments.txt")
    result = assert_split_invariant(fmt, text, max_examples=FEW)
    assert isinstance(result, ParseResult)
    assert [c.arguments for c in result.tool_calls] == ['{"city": "Paris"}']
    junk = '<|channel|>commentary to=functions.f<|message|> {"a": 1} x \n<|call|>'
    result = assert_split_invariant(fmt, junk, max_examples=FEW)
    assert isinstance(result, ParseResult)
    assert [c.arguments for c in result.tool_calls] == ['{"a": 1} x']
