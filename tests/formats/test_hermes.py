"""Tests of the Hermes / Qwen ``<tool_call>`` JSON format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import DecoderStateError, FormatError
from toolwire.formats import ParseResult, get
from toolwire.formats.hermes import HermesFormat
from toolwire.wire.events import TextDelta, ToolCallDelta, ToolCallStarted

from .conftest import (
    FIXTURES,
    assert_long_output_consistent,
    assert_only_toolwire_errors,
    assert_split_invariant,
    assert_split_matches,
    fixture_tools,
    load_fixture,
    marker_soup,
)

PREFILL = "<|im_start|>assistant\n<think>\n"
FIXTURE_NAMES = sorted(p.name for p in (FIXTURES / "hermes").glob("*.txt"))


def qwen3(prompt: str | None = None) -> HermesFormat:
    fmt = get("hermes", "qwen3", generation_prompt=prompt)
    assert isinstance(fmt, HermesFormat)
    return fmt


def args(result: ParseResult, index: int) -> object:
    return json.loads(result.tool_calls[index].arguments)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_fixture_is_split_invariant(name: str) -> None:
    prompt = PREFILL if "prefilled" in name else None
    assert_split_invariant(
        get("hermes", "qwen3", generation_prompt=prompt, tools=fixture_tools("hermes", name)),
        load_fixture("hermes", name),
        markers_in_arguments="markers_inside" in name,
    )


def test_rendered_reasoning_content_and_two_calls() -> None:
    result = qwen3().parse(load_fixture("hermes", "qwen3_rendered_reasoning_two_calls.txt"))
    # The template's newlines around </think> and the calls are separators, not text.
    assert result.reasoning == (
        "The user wants the weather in two cities, so I call get_weather twice."
    )
    assert result.content == "Let me check both cities."
    assert [c.name for c in result.tool_calls] == ["get_weather", "get_weather"]
    assert args(result, 0) == {"city": "Paris", "unit": "celsius"}
    assert args(result, 1) == {"city": "Tokyo", "unit": "celsius"}


def test_prefilled_think_starts_in_reasoning() -> None:
    result = qwen3(PREFILL).parse(load_fixture("hermes", "qwen3_prefilled_think.txt"))
    assert result.reasoning == "I need the current temperature first."
    assert result.content is None
    assert result.tool_calls[0].name == "get_current_temperature"


def test_closed_think_in_prompt_starts_in_content() -> None:
    prompt = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert qwen3(prompt).parse("Hi").content == "Hi"


def test_empty_reasoning_block() -> None:
    result = qwen3().parse(load_fixture("hermes", "qwen3_no_think_content_only.txt"))
    assert result == ParseResult("The capital of France is Paris.", "", ())


def test_back_to_back_calls_without_newlines() -> None:
    result = qwen3().parse(load_fixture("hermes", "vllm_back_to_back.txt"))
    assert result.content is None
    assert [args(result, i) for i in range(2)] == [{"q": "cats"}, {"q": "dogs"}]


def test_arguments_are_verbatim() -> None:
    result = qwen3().parse(load_fixture("hermes", "vllm_multiline_call.txt"))
    assert result.tool_calls[0].arguments == (
        '{"location":"San Francisco, California, United States", "unit": "celsius"}'
    )


def test_markers_inside_a_value_are_part_of_it() -> None:
    result = qwen3().parse(load_fixture("hermes", "qwen3_markers_inside_value.txt"))
    assert args(result, 0) == {
        "path": "notes.md",
        "content": "  keep </tool_call> and <think> and <tool_call>\n\tverbatim  ",
    }
    assert result.content is None


def test_call_running_to_end_of_output_is_kept() -> None:
    result = qwen3().parse(load_fixture("hermes", "vllm_until_eos.txt"))
    assert result.tool_calls[0].name == "final_answer"
    assert args(result, 0) == {"trigger": True}


def test_truncated_call_raises_with_partial() -> None:
    text = "Checking." + load_fixture("hermes", "vllm_truncated_object.txt")
    with pytest.raises(FormatError) as caught:
        qwen3().parse(text, strict=True)
    assert "ended inside a tool call" in str(caught.value)
    assert caught.value.fault == "model"
    assert caught.value.partial is not None
    assert caught.value.partial.content == "Checking."


def test_serialized_arguments_are_decoded_once() -> None:
    result = qwen3().parse(load_fixture("hermes", "vllm_serialized_arguments.txt"))
    assert args(result, 0) == {"param": "max_connections"}


def test_arguments_before_name() -> None:
    fmt = get("hermes", "hermes")
    result = fmt.parse(load_fixture("hermes", "hermes2pro_arguments_first.txt"))
    assert result.tool_calls[0].name == "get_stock_price"
    assert args(result, 0) == {"symbol": "AAPL"}
    assert result.content is None


def test_call_without_arguments_gets_empty_object() -> None:
    result = qwen3().parse('<tool_call>{"name": "now"}</tool_call>')
    assert result.tool_calls[0].arguments == "{}"


def test_extra_members_are_skipped() -> None:
    text = '<tool_call>{"id": 7, "name": "f", "extra": [1, "}"], "arguments": {"a": 1}}</tool_call>'
    assert qwen3().parse(text).tool_calls[0].arguments == '{"a": 1}'


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        '{"arguments": {}}',
        '{"name": 3, "arguments": {}}',
        '{"name": "f", "arguments": {}} trailing',
        '{"name": "f" "arguments": {}}',
        '{"name": "f", "arguments": {}, "arguments": {}}',
    ],
)
def test_malformed_call_raises(body: str) -> None:
    with pytest.raises(FormatError):
        qwen3().parse(f"<tool_call>{body}</tool_call>", strict=True)


def test_content_streams_before_a_possible_marker() -> None:
    stream = qwen3().stream()
    # The space may be the separator before a call marker: held until that is known.
    assert stream.feed("Hello <tool") == [TextDelta("Hello")]
    assert stream.feed("box>") == [TextDelta(" <toolbox>")]
    assert stream.close() == []


def test_arguments_stream_incrementally() -> None:
    stream = qwen3().stream(id_prefix="c")
    assert stream.feed('<tool_call>{"name": "f", "arguments": {"a": ') == [
        ToolCallStarted(0, "c0", "f"),
        ToolCallDelta(0, '{"a": '),
    ]
    assert stream.feed('"x"}}') == [ToolCallDelta(0, '"x"}')]
    assert stream.feed("</tool_call>") == []
    assert stream.close() == []


def test_tool_call_marker_inside_reasoning_is_reasoning() -> None:
    # Inside reasoning only </think> is a marker: a <tool_call> there is mentioned.
    text = 'plan<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    result = qwen3(PREFILL).parse(text)
    assert result.reasoning == text
    assert result.tool_calls == ()
    after = qwen3(PREFILL).parse(f"I would use {text}\n</think>\n\n{text}")
    assert after.reasoning == f"I would use {text}"
    assert [c.name for c in after.tool_calls] == ["f"]
    assert after.content == "plan"


def test_unterminated_reasoning_is_kept() -> None:
    assert qwen3().parse("<think>still thinking").reasoning == "still thinking"


@pytest.mark.parametrize("variant", ["qwen3-thinking", "qwq"])
def test_thinking_variants_start_in_reasoning(variant: str) -> None:
    result = get("hermes", variant).parse("hmm</think>answer")
    assert (result.reasoning, result.content) == ("hmm", "answer")


def test_qwen25_has_no_reasoning_markers() -> None:
    fmt = get("hermes", "qwen2.5")
    assert fmt.parse("<think>x</think>").content == "<think>x</think>"


def test_stream_misuse_is_a_caller_error() -> None:
    stream = qwen3().stream()
    stream.close()
    with pytest.raises(DecoderStateError):
        stream.feed("x")
    with pytest.raises(DecoderStateError):
        stream.close()


@settings(max_examples=200, deadline=None)
@given(marker_soup(["<think>", "</think>", "<tool_call>", "</tool_call>"]))
def test_fuzz_only_toolwire_errors(text: str) -> None:
    assert_only_toolwire_errors(qwen3(), text)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fuzz_split_invariant(data: st.DataObject) -> None:
    text = data.draw(marker_soup(["<think>", "</think>", "<tool_call>", "</tool_call>"]))
    cuts = data.draw(st.sets(st.integers(0, len(text))))
    assert_split_matches(qwen3(PREFILL), text, cuts)


def test_fixture_dir_has_sources() -> None:
    for name in FIXTURE_NAMES:
        raw = (Path(FIXTURES) / "hermes" / name).read_text(encoding="utf-8")
        assert raw.startswith("# Source:"), name


@pytest.mark.parametrize(
    ("variant", "name"),
    [
        ("qwen3", "qwen3_markers_inside_value.txt"),
        ("qwen3", "qwen3_rendered_reasoning_two_calls.txt"),
    ],
)
def test_long_output_parses_the_same_whole_and_in_pieces(variant: str, name: str) -> None:
    # A whole output in one feed walks the parser's cursor through the buffer many
    # times per feed; the benchmark (bench/bench_formats.py) covers its cost.
    assert_long_output_consistent(get("hermes", variant), load_fixture("hermes", name))


# ---- Qwen2.5-Coder's fenced JSON calls (read only for offered tools)


def _tools(*names: str) -> list[dict[str, object]]:
    return [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]


FENCED = {
    "variant_qwen25_coder_fenced_call.txt": (
        None,
        [("calculate_triangle_area", '{"base": 10, "height": 5}')],
    ),
    "variant_qwen25_coder_fenced_list.txt": (
        "I'll check both cities.\nBoth requests are on their way.",
        [("get_weather", '{"city": "Paris"}'), ("get_weather", '{"city": "Rome"}')],
    ),
    "variant_qwen25_coder_fenced_example.txt": (
        "A call to a tool looks like this:\n```json\n"
        '{"name": "send_email", "arguments": {"to": "a@example.com"}}\n```',
        [],
    ),
}


@pytest.mark.parametrize("variant", ["qwen2.5", "qwen3", "hermes"])
@pytest.mark.parametrize("name", sorted(FENCED))
def test_a_fenced_json_call_is_read_for_an_offered_tool(variant: str, name: str) -> None:
    content, calls = FENCED[name]
    fmt = get("hermes", variant, tools=fixture_tools("hermes", name))
    result = assert_split_invariant(fmt, load_fixture("hermes", name), markers_in_content=True)
    assert isinstance(result, ParseResult)
    assert result.content == content
    assert [(c.name, c.arguments) for c in result.tool_calls] == calls
    assert result.notices == ()


@pytest.mark.parametrize("name", sorted(FENCED))
def test_a_fenced_json_block_is_content_when_no_tools_are_known(name: str) -> None:
    # Without the offered tools nothing says the block is a call (a fence is no marker).
    text = load_fixture("hermes", name)
    result = get("hermes", "qwen2.5").parse(text)
    assert result.tool_calls == ()
    assert result.content == text.strip()


F = '{"name": "f", "arguments": {"a": 1}}'


@pytest.mark.parametrize(
    ("text", "content", "calls"),
    [
        # not a call: another language, text after the value, a list with a non-call,
        # arguments not an object, two values, no name, an unclosed value
        (f"```python\n{F}\n```", f"```python\n{F}\n```", 0),
        (f"```json\n{F} and more\n```", f"```json\n{F} and more\n```", 0),
        (f'```json\n[{F}, {{"a": 1}}]\n```', f'```json\n[{F}, {{"a": 1}}]\n```', 0),
        ('```json\n{"name": "f", "arguments": "x"}\n```', None, 0),
        (f"```json\n{F}\n{F}\n```", None, 0),
        ('```json\n{"arguments": {}}\n```', None, 0),
        ('```json\n{"name": "f", "arguments": {"a": 1', None, 0),
        ("```json\n[]\n```", None, 0),
        ("``` json \nplain text\n```", None, 0),
        # a call: the closing fence missing at the end of the output or before <|im_end|>
        (f"```json\n{F}\n", None, 1),
        (f"```json\n{F}\n``", None, 1),
        (f"```json\n{F}<|im_end|>", None, 1),
        (f"Text first.\n\n```JSON\n  {F}  \n```\n\nText after.", "Text first.\n\nText after.", 1),
        (f"{F}\n```json\n{F}\n```", F, 1),
    ],
)
def test_only_a_whole_fenced_call_is_a_call(text: str, content: str | None, calls: int) -> None:
    fmt = get("hermes", "qwen2.5", tools=_tools("f"))
    result = assert_split_invariant(fmt, text, max_examples=25, markers_in_content=True)
    assert isinstance(result, ParseResult)
    assert len(result.tool_calls) == calls
    assert all((c.name, c.arguments) == ("f", '{"a": 1}') for c in result.tool_calls)
    assert result.content == (text if content is None and not calls else content)


@pytest.mark.parametrize("opening", ["````", "```js `", "```" + " " * 40])
def test_a_fence_line_that_cannot_open_a_call_leaves_the_markers_after_it(opening: str) -> None:
    # Rejected at its first impossible character, parsed whole as streamed: the call
    # after it on the same line is still a call (it was content when parsed whole).
    text = f"{opening}<tool_call>\n{F}\n</tool_call>"
    fmt = get("hermes", "qwen2.5", tools=_tools("f"))
    result = assert_split_invariant(fmt, text, max_examples=25, markers_in_content=True)
    assert isinstance(result, ParseResult)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("f", '{"a": 1}')]


def test_text_before_a_fence_streams_and_the_block_waits_for_its_end() -> None:
    stream = get("hermes", "qwen2.5", tools=_tools("f")).stream(id_prefix="c")
    assert stream.feed("Sure.\n```json\n") == [TextDelta("Sure.")]
    assert stream.feed(F) == []  # not decided until the fence closes
    events = stream.feed("\n```")
    assert [type(e) for e in events] == [ToolCallStarted, ToolCallDelta]
    assert stream.close() == []


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fuzz_fenced_split_invariant(data: st.DataObject) -> None:
    pieces = ["```", "```json\n", "\n", " ", F, "[", "]", ",", "<tool_call>", "</tool_call>", "x"]
    text = data.draw(marker_soup(pieces))
    cuts = data.draw(st.sets(st.integers(0, len(text))))
    assert_split_matches(get("hermes", "qwen2.5", tools=_tools("f")), text, cuts)


BARE = '{"name": "f", "arguments": {"a": 1}}'


@pytest.mark.parametrize("text", [BARE, f"{BARE}\n{BARE}", f"{BARE}\n{BARE}\n{BARE}\n"])
def test_bare_json_calls_are_content_one_or_several(text: str) -> None:
    """Without <tool_call> tags or a fence, call-shaped JSON lines are the answer text,
    one object as several (docs/formats.md); the loop's call_shaped_text notice says so."""
    fmt = get("hermes", "qwen2.5", tools=_tools("f"))
    result = fmt.parse(text)
    assert result.tool_calls == () and result.notices == ()
    assert result.content == text.strip()
    for cut in range(len(text) + 1):
        assert_split_matches(fmt, text, [cut])
