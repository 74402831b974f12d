"""The contract every format keeps, whatever the family.

* Malformed and cut-off markup is data: the default parse passes the call's text through
  as content with a notice; ``strict=True`` raises instead.
* After ``close()`` the events of a stream describe exactly the non-streaming result,
  for every input and every split: a Hypothesis property over every fixture of every
  family, parsed by every variant of the family, whole and cut off anywhere.
* ``hold_calls=True`` emits a call only once it is complete, and never one that is not.
* In the default mode a call that turns out not to be one is retracted by an explicit
  event; ``to_openai_delta`` refuses to turn a retraction into a delta.
* Separator whitespace is the template's; whitespace inside text and values is exact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.errors import CallerError, FormatError
from toolwire.formats import Format, get, to_openai_delta
from toolwire.formats.registry import FAMILIES
from toolwire.turn import Notice
from toolwire.wire.events import (
    Event,
    TextDelta,
    ToolCallDelta,
    ToolCallRetracted,
    ToolCallStarted,
)

from .conftest import (
    FIXTURES,
    ID_PREFIX,
    assert_split_invariant,
    check_pieces,
    fixture_tools,
    load_fixture,
    passed_through,
    random_pieces,
    stream_pieces,
)

VARIANTS = {info.name: info.variants for info in FAMILIES}
ALL_FIXTURES = sorted(
    (path.parent.name, path.name)
    for path in FIXTURES.glob("*/*.txt")
    if path.parent.name in VARIANTS
)
CASES = [(family, name, v) for family, name in ALL_FIXTURES for v in VARIANTS[family]]


def _format(family: str, variant: str, name: str | None = None) -> Format:
    # A fixture whose calls are read only for offered tools names them in its header.
    return get(family, variant, tools=fixture_tools(family, name) if name else None)


# --------------------------------------------------------------------------- the property


@settings(
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.sampled_from(CASES),
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=0, max_value=2**32),
    st.integers(min_value=1, max_value=16),
)
def test_stream_ends_where_the_parse_ends(
    case: tuple[str, str, str], cut: float, seed: int, longest: int
) -> None:
    """Any fixture, cut off anywhere, split anywhere: every mode agrees with the parse."""
    family, name, variant = case
    fmt = _format(family, variant, name)
    whole = load_fixture(family, name)
    text = whole[: round(len(whole) * cut)] if cut < 1.0 else whole
    expected = fmt.parse(text, id_prefix=ID_PREFIX)
    try:
        strict = fmt.parse(text, id_prefix=ID_PREFIX, strict=True)
    except FormatError:
        assert passed_through(expected)
        strict_outcome: object = FormatError
    else:
        assert strict == expected
        strict_outcome = strict
    check_pieces(fmt, random_pieces(text, seed, longest), expected, strict_outcome)  # type: ignore[arg-type]
    check_pieces(fmt, list(text), expected, strict_outcome)  # type: ignore[arg-type]


@pytest.mark.parametrize(("family", "name"), [c for c in ALL_FIXTURES if "variant_" in c[1]])
def test_every_variant_fixture_cites_its_source(family: str, name: str) -> None:
    head = (FIXTURES / family / name).read_text(encoding="utf-8").partition("\n---\n")[0]
    assert head.startswith("# Source: ") and len(head) > 40


# --------------------------------------------------------------------------- class 1: data


BROKEN = [
    ("hermes", "qwen3", 'Let me check.\n<tool_call>\n{"name": "get_weather", "argum'),
    ("hermes", "qwen3", '<tool_call>\n{"name": "f", "arguments": {}} trailing junk'),
    ("qwen3_coder", "qwen3-coder", "<tool_call>\n<function=f>\n<parameter=a>\n1"),
    ("llama", "llama3-json", '{"name": "f", "parameters": {"a": 1'),
    ("mistral", "v11", "[TOOL_CALLS]f[ARGS]null"),
    ("deepseek", "v3.1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>[1]"),
    ("glm", "glm-4.5", "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1"),
    ("kimi", "k2", "<|tool_calls_section_begin|><|tool_call_begin|>oops<|tool_call_end|>"),
    ("harmony", "gpt-oss", '<|channel|>commentary to=functions.f<|message|>{"a": '),
    ("gemma", "gemma4", "<|tool_call>call:f{a:1"),
]


@pytest.mark.parametrize(("family", "variant", "text"), BROKEN)
def test_broken_call_is_content_with_a_notice(family: str, variant: str, text: str) -> None:
    fmt = _format(family, variant)
    result = assert_split_invariant(fmt, text, max_examples=40)
    assert result.tool_calls == ()
    assert passed_through(result)
    notice = result.notices[-1]
    assert notice.kind in ("malformed_call", "truncated_call")
    assert notice.message.startswith(f"{family}: ") and "offset" in notice.message
    if notice.kind == "truncated_call":
        # Cut off by the end of the output: what was written of the call is dropped,
        # the text before it stays.
        assert result.content is None or text.startswith(result.content)
        assert not any(m in (result.content or "") for m in fmt.markers)
    else:
        # Malformed: what the model wrote is kept, the broken call's text, markers and all.
        assert result.content is not None
        assert result.content in text and len(result.content) >= len(text.strip()) - 60
    with pytest.raises(FormatError):
        fmt.parse(text, strict=True)


def test_calls_completed_before_a_broken_one_stay() -> None:
    text = (
        '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "b", "arguments": {"x": '
    )
    result = get("hermes", "qwen3").parse(text)
    assert [c.name for c in result.tool_calls] == ["a"]
    assert result.content is None  # the cut-off call's text is not content
    assert [n.kind for n in result.notices] == ["truncated_call"]
    assert f"offset {text.index('<tool_call>', 1)} " in result.notices[0].message


def test_recovered_calls_are_flagged_repaired() -> None:
    fmt = get("qwen3_coder", "qwen3-coder")
    missing_param = load_fixture("qwen3_coder", "variant_missing_parameter_close.txt")
    result = assert_split_invariant(fmt, missing_param)
    assert [(c.name, json.loads(c.arguments), c.repaired) for c in result.tool_calls] == [
        ("get_current_weather", {"city": "Dallas", "state": "TX"}, True)
    ]
    assert [(n.kind, n.index) for n in result.notices] == [("repaired_call", 0)]
    missing_function = "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n</tool_call>"
    result = assert_split_invariant(fmt, missing_function, max_examples=40)
    assert [(c.arguments, c.repaired) for c in result.tool_calls] == [('{"a": "x"}', True)]
    assert fmt.parse(missing_function, id_prefix=ID_PREFIX, strict=True) == result


# --------------------------------------------------------------------------- class 2: streams


TRUNCATED = 'Checking.\n<tool_call>\n{"name": "f", "arguments": {"a": 1}'


def test_default_mode_retracts_a_call_that_turns_out_cut_off() -> None:
    stream = get("hermes", "qwen3").stream(id_prefix="c")
    events = stream.feed(TRUNCATED)
    assert events == [
        TextDelta("Checking."),
        ToolCallStarted(0, "c0", "f"),
        ToolCallDelta(0, '{"a": 1}'),
    ]
    end = stream.close()
    assert isinstance(end[0], ToolCallRetracted) and end[0].index == 0
    assert "ended inside a tool call" in end[0].reason
    assert isinstance(end[1], Notice) and end[1].kind == "truncated_call"
    assert end[2:] == []  # its text is neither a call nor content


def test_hold_calls_emits_a_call_only_once_complete() -> None:
    fmt = get("hermes", "qwen3")
    stream = fmt.stream(id_prefix="c", hold_calls=True)
    assert stream.feed('Hi\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}') == [TextDelta("Hi")]
    assert stream.feed("\n</tool_call>") == [
        ToolCallStarted(0, "c0", "f"),
        ToolCallDelta(0, '{"a": 1}'),
    ]
    cut = fmt.stream(id_prefix="c", hold_calls=True)
    events = cut.feed(TRUNCATED) + cut.close()
    assert not any(isinstance(e, (ToolCallStarted, ToolCallRetracted)) for e in events)
    assert stream_pieces(fmt, list(TRUNCATED), hold_calls=True)[0] == fmt.parse(
        TRUNCATED, id_prefix=ID_PREFIX
    )


def test_a_proxy_in_hold_mode_serves_deltas_that_rebuild_the_parse() -> None:
    fmt = get("qwen3_coder", "qwen3-coder")
    text = load_fixture("qwen3_coder", "vllm_parallel.txt") + "\n<tool_call>\n<function=g>"
    stream = fmt.stream(id_prefix="c", hold_calls=True)
    deltas = [to_openai_delta(e) for piece in text for e in stream.feed(piece)]
    deltas += [to_openai_delta(e) for e in stream.close()]
    content = "".join(d["content"] for d in deltas if d and "content" in d)
    calls: dict[int, list[str]] = {}
    for d in deltas:
        for call in (d or {}).get("tool_calls", []):
            calls.setdefault(call["index"], []).append(call["function"]["arguments"])
    parsed = fmt.parse(text, id_prefix="c")
    assert (content or None) == parsed.content
    assert ["".join(parts) for _, parts in sorted(calls.items())] == [
        c.arguments for c in parsed.tool_calls
    ]


def test_to_openai_delta_refuses_a_retraction() -> None:
    with pytest.raises(CallerError, match="hold_calls=True"):
        to_openai_delta(ToolCallRetracted(0, "cut off"))
    assert to_openai_delta(Notice("truncated_call", "x")) is None


# --------------------------------------------------------------------------- class 3: context


@pytest.mark.parametrize(
    ("family", "variant", "name", "reasoning", "calls"),
    [
        ("hermes", "qwen3", "variant_think_mentions_tool_call.txt",
         "I should answer with a <tool_call> block.", ["get_weather"]),
        ("mistral", "v13", "variant_think_mentions_tool_calls.txt",
         "Use [TOOL_CALLS] for the call.", ["get_weather"]),
        ("harmony", "gpt-oss", "variant_analysis_mentions_call.txt",
         "I end tool messages with <|call|> later.", ["get_weather"]),
    ],
)  # fmt: skip
def test_markers_inside_reasoning_are_reasoning(
    family: str, variant: str, name: str, reasoning: str, calls: list[str]
) -> None:
    fmt = _format(family, variant)
    result = assert_split_invariant(fmt, load_fixture(family, name), markers_in_content=True)
    assert result.reasoning == reasoning
    assert [c.name for c in result.tool_calls] == calls


@pytest.mark.parametrize(
    ("family", "variant", "name", "expected"),
    [
        ("qwen3_coder", "qwen3-coder", "variant_closing_tags_in_value.txt",
         {"content": "close with </parameter> then </function> and go on", "path": "notes.md"}),
        ("deepseek", "v4", "variant_v4_param_close_in_value.txt",
         {"content": "end a value with </｜DSML｜parameter> and go on", "path": "notes.md"}),
        ("glm", "glm-4.5", "variant_arg_value_close_in_value.txt",
         {"content": "ends with </arg_value> literally", "path": "a.txt"}),
        ("kimi", "k3", "variant_k3_closing_tags_in_value.txt",
         {"content": "end with <|close|>argument<|sep|>, <|close|>call<|sep|> or "
          "<|close|>tools<|sep|> literally", "path": "notes.md"}),
    ],
)  # fmt: skip
def test_closing_tags_inside_a_value_are_value(
    family: str, variant: str, name: str, expected: dict[str, str]
) -> None:
    fmt = _format(family, variant)
    result = assert_split_invariant(fmt, load_fixture(family, name), markers_in_arguments=True)
    assert [json.loads(c.arguments) for c in result.tool_calls] == [expected]
    assert result.content is None and result.notices == ()


def test_a_closing_tag_is_held_only_while_ambiguous() -> None:
    stream = get("qwen3_coder", "qwen3-coder").stream(id_prefix="c")
    events = stream.feed("<tool_call>\n<function=f>\n<parameter=a>\nx </parameter>")
    # "x " streams; "</parameter>" waits to see whether the grammar goes on after it.
    assert "".join(e.arguments for e in events if isinstance(e, ToolCallDelta)) == '{"a": "x '
    assert stream.feed(" y") == [ToolCallDelta(0, "</parameter> y")]


# --------------------------------------------------------------------------- class 4: variants


VARIANT_CASES = [
    ("deepseek", "v3.1", "variant_v31_bare_call_no_section.txt", "Checking.",
     [("get_weather", {"location": "NYC"})]),
    ("deepseek", "v3.1", "variant_v31_missing_call_begin.txt", None,
     [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]),
    ("deepseek", "v4", "variant_v4_bare_invoke.txt", "Let me look.",
     [("get_weather", {"city": "Paris"})]),
    ("deepseek", "v4", "variant_v4_self_closing_invoke.txt", None,
     [("get_time", {}), ("get_weather", {"days": 3})]),
    ("deepseek", "v4", "variant_v4_ascii_dsml.txt", "Checking.",
     [("get_weather", {"city": "Seoul", "days": 2})]),
    ("deepseek", "v4", "variant_v32_block_in_v4.txt", None,
     [("get_datetime", {"timezone": "Asia/Shanghai"})]),
    ("deepseek", "v4", "variant_v4_double_bar_dsml.txt", "Looking it up.",
     [("get_weather", {"city": "Oslo", "days": 1})]),
    ("deepseek", "v3.2", "variant_v4_doubled_fullwidth_dsml.txt", None,
     [("search", {"query": "tide tables"})]),
    ("deepseek", "v4", "variant_v41_spaced_dsml.txt", "Let me check the weather.",
     [("get_weather", {"city": "Paris", "days": 3})]),
    ("deepseek", "v4", "variant_v41_two_calls.txt", None,
     [("get_weather", {"location": 'Beijing, "north"', "days": [1, 2]}),
      ("search", {"q": "rain"})]),
    ("deepseek", "v3.2", "variant_v41_ascii_spaced.txt", "Searching.",
     [("search", {"query": "tide tables"})]),
    ("qwen3_coder", "qwen3-coder", "variant_function_without_tool_call.txt", "I will check.",
     [("get_current_weather", {"city": "Dallas"})]),
    ("kimi", "k2", "variant_k2_stray_text_in_section.txt", "I'll check. one moment",
     [("get_weather", {"city": "Rome"})]),
    ("kimi", "k2", "variant_k2_noise_after_section.txt", "Let me look.\nIt is sunny there.",
     [("get_weather", {"city": "Rome"})]),
    ("llama", "llama3-json", "variant_json_type_function.txt", None,
     [("get_weather", {"city": "Paris"})]),
    ("mistral", "v11", "variant_v11_think_as_text.txt", "Checking.",
     [("get_weather", {"city": "Paris"})]),
    ("mistral", "v13", "variant_v13_spaces_around_markers.txt", "Checking.",
     [("get_weather", {"city": "Paris"}), ("get_time", {})]),
    ("harmony", "gpt-oss", "variant_builtin_python_not_offered.txt", None, []),
    ("hermes", "qwen3", "variant_im_end_passed_on.txt", "Checking both.",
     [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]),
    ("harmony", "gpt-oss", "variant_recipient_on_analysis_code.txt", None,
     [("ffgrep", {"path": "", "pattern": "TextualDisplayView"})]),
    ("glm", "glm-4.5", "variant_interleaved_thinking.txt", "Hello, world!\nWhat's up?",
     [("special_function", {"arg1": "1"})]),
    ("harmony", "gpt-oss", "variant_text_before_first_header.txt",
     "Let me search for that information.\nHere are the results...",
     [("search", {"query": "rust programming", "limit": 10})]),
    ("harmony", "gpt-oss", "variant_endoftext_after_return.txt", "Hello!", []),
    ("harmony", "gpt-oss", "variant_whitespace_around_arguments.txt", None,
     [("get_weather", {"city": "Paris"})]),
    ("harmony", "gpt-oss", "variant_calls_back_to_back.txt", None,
     [("get_current_weather", {"location": "San Francisco, CA", "unit": "fahrenheit"}),
      ("get_current_stock_price", {"symbol": "AAPL", "exchange": "NASDAQ"})]),
]  # fmt: skip


@pytest.mark.parametrize(("family", "variant", "name", "content", "calls"), VARIANT_CASES)
def test_variants_real_models_write(
    family: str, variant: str, name: str, content: str | None, calls: list[object]
) -> None:
    fmt = _format(family, variant)
    result = assert_split_invariant(fmt, load_fixture(family, name), markers_in_content=True)
    assert result.content == content
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == calls
    assert result.notices == ()


def test_mistral_text_think_is_reasoning() -> None:
    result = get("mistral", "v11").parse(load_fixture("mistral", "variant_v11_think_as_text.txt"))
    assert result.reasoning == "The user wants the weather; [TOOL_CALLS] is how I call tools."


# --------------------------------------------------------------------------- class 5: whitespace


def test_separator_whitespace_is_the_templates() -> None:
    fmt = get("hermes", "qwen3")
    call = '<tool_call>\n{"name": "f", "arguments": {"s": "  two\\n lines  "}}\n</tool_call>'
    only_calls = fmt.parse(f"<think>\n\n</think>\n\n{call}\n{call}\n")
    assert only_calls.content is None and only_calls.reasoning == ""
    assert json.loads(only_calls.tool_calls[0].arguments) == {"s": "  two\n lines  "}
    around = fmt.parse(f"<think>\nA\n\nB\n</think>\n\nFirst  line\n\nsecond.\n{call}\n\nAfter.\n")
    assert around.reasoning == "A\n\nB"
    assert around.content == "First  line\n\nsecond.\nAfter."


def test_trailing_whitespace_is_held_until_what_follows_is_known() -> None:
    stream = get("hermes", "qwen3").stream()
    assert stream.feed("Hello \n") == [TextDelta("Hello")]
    assert stream.feed("world") == [TextDelta(" \nworld")]
    assert stream.feed("\n") == []
    assert stream.close() == []


def _events_text(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_fixture_directory_lists_only_families() -> None:
    assert {p.name for p in FIXTURES.iterdir() if p.is_dir()} <= set(VARIANTS)
    assert all(isinstance(p, Path) for p in FIXTURES.iterdir())


# One call per family in its template's layout (Harmony's text is in channels, not
# around calls: its separators are its messages).
ONE_CALL = {
    ("hermes", "qwen3"): '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>',
    ("qwen3_coder", "qwen3-coder"): (
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"
    ),
    ("llama", "llama3-json"): '<|python_tag|>{"name": "f", "parameters": {"a": 1}}',
    ("mistral", "v11"): '[TOOL_CALLS]f[ARGS]{"a": 1}',
    ("deepseek", "v3.1"): (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>"
        '{"a": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
    ("deepseek", "v4"): (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n'
        '<｜DSML｜parameter name="a" string="false">1</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    ),
    (
        "glm",
        "glm-4.5",
    ): "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
    ("kimi", "k2"): (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
        '<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|><|tool_calls_section_end|>'
    ),
    ("gemma", "gemma4"): "<|tool_call>call:f{a:1}<tool_call|>",
}


@pytest.mark.parametrize(("family", "variant"), sorted(ONE_CALL))
def test_separator_whitespace_is_trimmed_alike_in_every_family(family: str, variant: str) -> None:
    fmt = get(family, variant, generation_prompt="")
    call = ONE_CALL[family, variant]
    cases = {
        f"  Before.\n\n{call}\n\nAfter.  \n": "Before.\n\nAfter.",
        f"Before. {call} After.": "Before. After.",
        f"Before.\n{call}\n{call}\nAfter.": "Before.\nAfter.",
        f"\n\n{call}\n\n": None,
        f"Before.\n\n{call}": "Before.",
    }
    for text, content in cases.items():
        result = assert_split_invariant(fmt, text, max_examples=8)
        assert (result.content, [c.name for c in result.tool_calls]) == (
            content,
            ["f"] * text.count(call),
        ), text
