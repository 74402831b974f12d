from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.wire import ClosureScanner, PartialJSON, PartialJSONError

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
containers = st.one_of(
    st.lists(json_values, max_size=4), st.dictionaries(st.text(max_size=8), json_values, max_size=4)
)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]


@settings(max_examples=1000, deadline=None)
@given(containers, st.lists(st.integers(min_value=0, max_value=400), max_size=30), st.booleans())
def test_closure_reported_exactly_at_the_end(
    value: object, cuts: list[int], ascii_only: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=None if cuts[:1] != [0] else 1)
    scanner = ClosureScanner()
    consumed = 0
    closed_at = -1
    for piece in split(text, cuts):
        offset = scanner.feed(piece)
        if offset >= 0:
            closed_at = consumed + offset
            break
        consumed += len(piece)
    assert closed_at == len(text)
    assert scanner.closed


def test_closure_ignores_brackets_in_strings_and_escapes() -> None:
    scanner = ClosureScanner()
    pieces = ['{"a": "}\\', '"]', '}\\\\"', ", ", '"b": [1]', "}  "]
    results = [scanner.feed(p) for p in pieces]
    assert results == [-1, -1, -1, -1, -1, 1]


def test_closure_scalar_top_level_is_never_reported() -> None:
    scanner = ClosureScanner()
    assert scanner.feed('"just a string"') == -1
    assert scanner.feed("}") == -1
    assert not scanner.closed


@settings(max_examples=1000, deadline=None)
@given(json_values, st.lists(st.integers(min_value=0, max_value=400), max_size=40), st.booleans())
def test_partial_json_final_value_matches_json_loads(
    value: object, cuts: list[int], ascii_only: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    parser = PartialJSON()
    root = None
    for piece in split(text, cuts):
        parser.feed(piece)
        current = parser.value  # readable after any delta
        if isinstance(current, (dict, list)):
            root = root if root is not None else current
            assert current is root  # one object, updated in place
    expected = json.loads(text)
    if isinstance(expected, (dict, list, str)) or text[-1] in "el":
        assert parser.complete
    assert parser.value == expected or (parser.value is None and isinstance(expected, (int, float)))


def test_partial_strings_show_partial_content() -> None:
    parser = PartialJSON()
    parser.feed('{"q": "lo')
    assert parser.value == {"q": "lo"}
    parser.feed("g\\u00")
    assert parser.value == {"q": "log"}  # an unfinished escape is held back
    parser.feed('e9", "n": [1, 2')
    assert parser.value == {"q": "logé", "n": [1]}  # 2 may still grow
    parser.feed("0]}")
    assert parser.value == {"q": "logé", "n": [1, 20]}
    assert parser.complete


@pytest.mark.parametrize("bad", ["}", '{"a" 1}', "[1,,]x", '{"a":1}}', "nulx", '{"a":tx'])
def test_malformed_input_raises_and_stays_failed(bad: str) -> None:
    parser = PartialJSON()
    with pytest.raises(PartialJSONError):
        for ch in bad:
            parser.feed(ch)
    with pytest.raises(PartialJSONError):
        parser.feed("1")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='{}[]",:\\ 0123456789.-eEtruefalsn', max_size=40))
def test_partial_json_fuzz_only_its_error(text: str) -> None:
    parser = PartialJSON()
    try:
        for ch in text:
            parser.feed(ch)
            _ = parser.value
    except PartialJSONError:
        pass


# ---- ClosureScanner(any_value=True): what the text-marker formats use


@pytest.mark.parametrize(
    "value",
    ['{"a": [1, {"b": "}]\\"\\\\"}], "c": null}', '["x", [], {}]', '"a \\" string } ]"', "{}"],
)
def test_any_value_finds_the_end_after_a_start_offset(value: str) -> None:
    scanner = ClosureScanner(any_value=True)
    text = "head " + value + " tail"
    assert scanner.feed(text, 5) == 5 + len(value)
    assert scanner.closed and scanner.finish()


def test_any_value_scalar_ends_before_its_delimiter_or_at_finish() -> None:
    assert ClosureScanner(any_value=True).feed("true}", 0) == 4
    assert ClosureScanner(any_value=True).feed("x: -1.5e3, y", 3) == 9
    scanner = ClosureScanner(any_value=True)
    assert scanner.feed("  12") == -1
    assert scanner.feed(".5") == -1
    assert not scanner.closed
    assert scanner.finish()
    assert scanner.closed


def test_finish_reports_an_open_value_as_incomplete() -> None:
    for text in ('{"a": 1', '"open', "[", "", "   "):
        scanner = ClosureScanner(any_value=True)
        scanner.feed(text)
        assert not scanner.finish(), text
    default = ClosureScanner()
    default.feed("12")  # not a container: the default scanner gives up on it
    assert not default.finish()


def test_started_is_set_by_the_first_non_space_character() -> None:
    scanner = ClosureScanner(any_value=True)
    assert scanner.feed(" \n\t") == -1
    assert not scanner.started
    assert scanner.feed(' "x') == -1
    assert scanner.started


def test_a_closed_scanner_reports_nothing_more() -> None:
    scanner = ClosureScanner(any_value=True)
    assert scanner.feed('"a"') == 3
    assert scanner.feed('"b"') == -1
    assert scanner.closed


@settings(max_examples=1000, deadline=None)
@given(
    json_values,
    st.lists(st.integers(min_value=0, max_value=400), max_size=30),
    st.integers(min_value=0, max_value=3),
    st.sampled_from(["", " ", ",", "}", "]", "\n"]),
)
def test_any_value_end_reported_exactly_for_any_split_and_offset(
    value: object, cuts: list[int], offset: int, after: str
) -> None:
    text = json.dumps(value)
    scalar = text[0] not in '{["'
    stream = "x" * offset + text + after
    scanner = ClosureScanner(any_value=True)
    consumed = 0
    end = -1
    # The first piece holds the offset and is scanned from it, as a format scans from
    # its cursor inside a buffer that holds other text too.
    for i, piece in enumerate(split(stream, [c for c in cuts if c > offset])):
        got = scanner.feed(piece, offset if i == 0 else 0)
        if got >= 0:
            end = consumed + got
            break
        consumed += len(piece)
    if scalar and not after:
        assert end == -1  # nothing after a bare scalar: it ends with the input
        assert scanner.finish()
    else:
        assert end == len(stream) - len(after)
    assert scanner.closed


@settings(max_examples=1000, deadline=None)
@given(containers, st.lists(st.integers(min_value=0, max_value=400), max_size=30), st.booleans())
def test_closes_reports_the_piece_that_closes(
    value: object, cuts: list[int], ascii_only: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    scanner = ClosureScanner()
    pieces = split(text, cuts)
    results = [scanner.closes(piece) for piece in pieces]
    assert results == [False] * (len(pieces) - 1) + [True]


def test_closes_handles_strings_escapes_and_brackets_inside_strings() -> None:
    scanner = ClosureScanner()
    pieces = ['{"a": "}]\\', '"', ' {[", "b": [1, {"c": "\\\\"}]', ", ", '"d": "x"', "}  "]
    assert [scanner.closes(p) for p in pieces] == [False, False, False, False, False, True]


def test_complete_is_false_while_a_top_level_string_is_open() -> None:
    parser = PartialJSON()
    parser.feed('"abc')
    assert (parser.value, parser.complete) == ("abc", False)
    parser.feed('d"')
    assert (parser.value, parser.complete) == ("abcd", True)
    with pytest.raises(PartialJSONError, match="extra data"):
        parser.feed(" 1 ")
