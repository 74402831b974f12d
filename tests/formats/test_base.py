"""Tests of the shared format machinery."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import CallerError, FormatError, ModelOutputError
from toolwire.formats import ParsedCall, ParseResult, to_openai_delta
from toolwire.formats.callobject import CallObjectReader
from toolwire.formats.coerce import ToolIndex, coerce_value, schema_types, value_to_json
from toolwire.formats.ids import AlphanumericIds, IdFactory
from toolwire.formats.markers import MarkerSet, opens_reasoning
from toolwire.formats.results import collect_events
from toolwire.wire.events import (
    Finished,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallStarted,
)

from .conftest import random_pieces

# ---- MarkerSet


def test_marker_search_finds_earliest_and_longest() -> None:
    markers = MarkerSet(["<a>", "<ab>", "</a>"])
    assert markers.search("xx<ab>yy<a>") == (2, "<ab>")
    assert markers.search("xx</a><a>", 3) == (6, "<a>")
    assert markers.search("none") is None


@pytest.mark.parametrize(
    ("text", "held"),
    [("abc<", 1), ("abc</", 2), ("abc<a", 2), ("abc</a", 3), ("abc", 0), ("<a>", 0), ("", 0)],
)
def test_holdback_is_the_longest_marker_prefix(text: str, held: int) -> None:
    assert MarkerSet(["<ab>", "</a>"]).holdback(text) == held


def test_split_safe() -> None:
    assert MarkerSet(["<tool_call>"]).split_safe("Hello <tool") == ("Hello ", "<tool")


def test_marker_set_needs_markers() -> None:
    with pytest.raises(CallerError):
        MarkerSet([])


# ---- CallObjectReader


def _read(pieces: list[str]) -> tuple[list[tuple[str, str]], int]:
    reader, ops, consumed = CallObjectReader(family="t"), [], 0
    for piece in pieces:
        more, end = reader.feed(piece)
        ops += more
        if end >= 0:
            return ops, consumed + end
        consumed += len(piece)
    return ops, -1


_CALL = '{"name": "f", "x": [1, "}"], "arguments": {"s": "a\\"}b"}} after'


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 8))
def test_call_reader_any_split(seed: int, longest: int) -> None:
    ops, end = _read(random_pieces(_CALL, seed, longest))
    assert ops[0] == ("name", "f")
    assert "".join(v for k, v in ops[1:]) == '{"s": "a\\"}b"}'
    assert _CALL[end:] == " after"


def test_call_reader_arguments_before_name_are_held() -> None:
    ops, _ = _read(['{"arguments": {"a": 1}, "name": "f"}'])
    assert ops == [("name", "f"), ("args", '{"a": 1}')]


@pytest.mark.parametrize(
    ("text", "arguments"),
    [('{"name": "f", "arguments": null}', "{}"), ('{"name": "f"}', "{}")],
)
def test_call_reader_missing_arguments(text: str, arguments: str) -> None:
    assert _read([text])[0][-1] == ("args", arguments)


@pytest.mark.parametrize(
    "text",
    ["[]", '{"name": ""}', '{"name": "f", "name": "g"}', '{"a" 1}', '{"name": "f",]', "{1: 2}"],
)
def test_call_reader_rejects(text: str) -> None:
    with pytest.raises(FormatError):
        _read([text])


# ---- schema typing


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("3", {"type": "integer"}, 3),
        ("3", {"type": "string"}, "3"),
        ("3", None, "3"),
        ("3.0", {"type": "integer"}, 3),
        ("3.5", {"type": "integer"}, "3.5"),
        (" 2.5e1 ", {"type": "number"}, 25.0),
        ("nan", {"type": "number"}, "nan"),
        ("True", {"type": "boolean"}, True),
        ("false", {"type": "boolean"}, False),
        ("yes", {"type": "boolean"}, "yes"),
        ("null", {"type": ["integer", "null"]}, None),
        ("7", {"anyOf": [{"type": "integer"}, {"type": "null"}]}, 7),
        ("seven", {"type": ["integer", "string"]}, "seven"),
        ('{"a": 1}', {"type": "object"}, {"a": 1}),
        ("{'a': (1, 2)}", {"type": "object"}, "{'a': (1, 2)}"),
        ("{'a': [1, 2]}", {"type": "object"}, {"a": [1, 2]}),
        ("[1, 2]", {"type": "array"}, [1, 2]),
        ("[1, 2]", {"type": "object"}, "[1, 2]"),
        ("{1, 2}", {"type": "array"}, "{1, 2}"),
        ("  keep  spaces\n", {"type": "string"}, "  keep  spaces\n"),
        ("3.14", {"type": "float"}, 3.14),
        ("{}", {"properties": {}}, {}),
        ("b", {"enum": ["a", "b"]}, "b"),
        ("2", {"enum": [1, 2]}, 2),
    ],
)
def test_coerce_value(text: str, schema: dict[str, Any] | None, expected: Any) -> None:
    assert coerce_value(text, schema) == expected
    assert json.loads(value_to_json(text, schema)) == expected


def test_schema_types_of_nothing() -> None:
    assert schema_types(None) == set()
    assert schema_types({}) == set()


# ---- tools, ids, reasoning prefill


def test_tool_index_shapes() -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "a", "parameters": {"properties": {"x": {"type": "integer"}}}},
        },
        {"name": "b", "input_schema": {"type": "object"}},
        {"name": "c"},
    ]
    index = ToolIndex(tools)
    assert index.names == ("a", "b", "c")
    assert index.property_schema("a", "x") == {"type": "integer"}
    assert index.property_schema("a", "y") is None
    assert index.parameters("b") == {"type": "object"}
    assert index.parameters("zz") is None
    assert "c" in index


@pytest.mark.parametrize(
    "tools",
    [
        "x",
        {"name": "a"},
        [1],
        [{"function": 3}],
        [{"type": "function"}],
        [{"name": "a", "parameters": []}],
    ],
)
def test_tool_index_rejects_bad_definitions(tools: Any) -> None:
    with pytest.raises(CallerError):
        ToolIndex(tools)


def test_id_factory() -> None:
    assert IdFactory("x_").make(3) == "x_3"
    first, second = IdFactory(), IdFactory()
    assert first.prefix != second.prefix


_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")  # mistral_common's MistralRequestValidatorV3


@pytest.mark.parametrize(
    ("prefix", "index", "expected"),
    [
        ("call_test_", 0, "calltest0"),
        ("call_test_", 10, "calltes10"),
        ("c", 7, "c00000007"),
        ("", 3, "000000003"),
        ("_-.", 12, "000000012"),
        ("averyveryverylongprefix", 123, "averyv123"),
        ("x", 10**9 + 5, "000000005"),  # past what one output can hold: still 9 characters
    ],
)
def test_alphanumeric_ids_from_a_prefix_are_deterministic(
    prefix: str, index: int, expected: str
) -> None:
    assert AlphanumericIds(prefix).make(index) == expected
    assert AlphanumericIds(prefix).make(index) == expected


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=20)), st.integers(0, 10**6))
def test_alphanumeric_ids_are_nine_letters_and_digits(prefix: str | None, index: int) -> None:
    assert _MISTRAL_ID.fullmatch(AlphanumericIds(prefix).make(index))


def test_random_alphanumeric_ids_do_not_repeat_within_a_stream() -> None:
    ids = AlphanumericIds()
    made = [ids.make(i) for i in range(2000)]
    assert len(set(made)) == len(made)
    assert all(_MISTRAL_ID.fullmatch(i) for i in made)
    assert AlphanumericIds().make(0) != AlphanumericIds().make(0)  # 62**-9 to fail


def test_distinct_indexes_give_distinct_prefixed_ids() -> None:
    ids = AlphanumericIds("call_")
    made = {ids.make(i) for i in range(10_000)}
    assert len(made) == 10_000


def test_marker_match_only_at_the_position() -> None:
    markers = MarkerSet(["<a>", "<ab>"])
    assert markers.match("x<ab>", 1) == "<ab>"
    assert markers.match("x<ab>", 0) is None
    assert markers.match("<a", 0) is None


@pytest.mark.parametrize(
    ("prompt", "opened"),
    [
        ("<|im_start|>assistant\n<think>\n", True),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),
        ("<|im_start|>assistant\n", False),
        ("<think>a</think> more <think>", True),
        (None, False),
        ("", False),
    ],
)
def test_opens_reasoning(prompt: str | None, opened: bool) -> None:
    assert opens_reasoning(prompt, "<think>", "</think>") is opened


# ---- results and deltas


def test_collect_events() -> None:
    events = [
        ReasoningDelta("r"),
        TextDelta("a"),
        ToolCallStarted(0, "id0", "f"),
        ToolCallDelta(0, '{"x": '),
        ToolCallStarted(1, "id1", "g"),
        ToolCallDelta(0, "1}"),
        TextDelta("b"),
        Finished("stop"),
    ]
    result = collect_events(events)
    assert result == ParseResult(
        "ab", "r", (ParsedCall("f", '{"x": 1}', "id0"), ParsedCall("g", "", "id1"))
    )
    assert result.to_dict()["tool_calls"][0] == {"id": "id0", "name": "f", "arguments": '{"x": 1}'}


def test_to_openai_delta() -> None:
    assert to_openai_delta(TextDelta("a")) == {"content": "a"}
    assert to_openai_delta(ReasoningDelta("r")) == {"reasoning_content": "r"}
    assert to_openai_delta(ToolCallStarted(2, "c2", "f")) == {
        "tool_calls": [
            {"index": 2, "id": "c2", "type": "function", "function": {"name": "f", "arguments": ""}}
        ]
    }
    assert to_openai_delta(ToolCallDelta(2, "{}")) == {
        "tool_calls": [{"index": 2, "function": {"arguments": "{}"}}]
    }
    assert to_openai_delta(Finished("stop")) is None


def test_format_error_is_the_models_fault() -> None:
    error = FormatError("bad call", family="hermes", where="tool call 1")
    assert isinstance(error, ModelOutputError)
    assert error.fault == "model"
    assert "hermes: bad call at tool call 1" in str(error)


def test_an_integer_over_the_digit_limit_stays_text() -> None:
    """int() refuses it; the value stays text and the tool's validation says why."""
    huge = "9" * 5000
    assert coerce_value(huge, {"type": "integer"}) == huge
    assert coerce_value(huge, {"type": "number"}) == huge
    assert value_to_json(huge, {"type": "integer"}) == f'"{huge}"'


# --------------------------------------------------------------------------- trimming


class _ReferenceTrim:
    """The separator rules of formats/trim.py written plainly (strip, then decide)."""

    def __init__(self) -> None:
        self.held, self.lead, self.at_boundary, self.started = "", "", True, False

    def text(self, piece: str) -> str:
        if self.at_boundary:
            body = piece.lstrip(" \t\r\n")
            if not body:
                self.lead += piece
                return ""
            self.lead += piece[: len(piece) - len(body)]
            sep = (self.held or self.lead) if self.started else ""
            self.at_boundary, self.held, self.lead = False, "", ""
            piece = sep + body
        body = piece.rstrip(" \t\r\n")
        if not body:
            self.held += piece
            return ""
        out, self.held, self.started = self.held + body, piece[len(body) :], True
        return out

    def boundary(self) -> None:
        if not self.at_boundary:
            self.at_boundary, self.lead = True, ""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=" \n\tab", min_size=1, max_size=6))))
def test_separator_trim_follows_its_rules(ops: list[str | None]) -> None:
    """Any run of pieces and markers (None): the fast paths give what the rules give."""
    from toolwire.formats.trim import SeparatorTrim

    trim, reference = SeparatorTrim(), _ReferenceTrim()
    for op in ops:
        if op is None:
            trim.boundary()
            reference.boundary()
        else:
            assert trim.text(op) == reference.text(op)
        assert trim.held == reference.held and trim.at_boundary == reference.at_boundary
