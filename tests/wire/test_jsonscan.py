from __future__ import annotations

import json
import re
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from toolwire.errors import PartialJSONError
from toolwire.wire import ClosureScanner, PartialJSON, jsonscan

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


def check_closure_at_the_end(value: object, cuts: list[int], ascii_only: bool) -> None:
    """``feed`` reports the closing bracket's offset in the piece that holds it (a first
    cut at 0 lays the text out over several lines)."""
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


def check_final_value(value: object, cuts: list[int], ascii_only: bool) -> None:
    """``PartialJSON``'s value is readable after any delta, one container updated in
    place, and at the end what ``json.loads`` gives."""
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


def check_any_value_end(value: object, cuts: list[int], offset: int, after: str) -> None:
    """A scanner of any value reports its end exactly, for any split and any start
    offset; a bare scalar with nothing after it ends at ``finish``."""
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


@contextmanager
def strings_by(find: bool) -> Iterator[None]:
    """One of the two ways ``closes`` skips strings (``_FIND_STRINGS``). Only the pure
    build can switch: a compiled module's ``Final`` is a C constant (it runs its own)."""
    saved = jsonscan._FIND_STRINGS
    jsonscan._FIND_STRINGS = find  # type: ignore[misc]
    try:
        yield
    finally:
        jsonscan._FIND_STRINGS = saved  # type: ignore[misc]


BOTH_WAYS = pytest.mark.parametrize("find", [True, False], ids=["find", "regex"])


def check_closes(value: object, cuts: list[int], ascii_only: bool) -> None:
    """``closes`` is true for the piece that closes the value and for no piece before,
    with each of the two ways of skipping strings."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    pieces = split(text, cuts)
    for find in (True, False):
        note(f"find: {find}")
        scanner = ClosureScanner()
        with strings_by(find):
            results = [scanner.closes(piece) for piece in pieces]
        assert results == [False] * (len(pieces) - 1) + [True]


@settings(max_examples=1000, deadline=None)
@given(containers, st.lists(st.integers(min_value=0, max_value=400), max_size=30), st.booleans())
def test_a_container_is_closed_exactly_at_its_end(
    value: object, cuts: list[int], ascii_only: bool
) -> None:
    """The closure scanner's two entry points, ``feed`` and ``closes`` (the latter both
    ways), get the same 1,000 examples: drawing one is nearly all of its cost, so each
    is drawn once and checked every way, with the assertions each had alone."""
    note("feed")
    check_closure_at_the_end(value, cuts, ascii_only)
    note("closes")
    check_closes(value, cuts, ascii_only)


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["{}"], [True]),
        (['  \n{"a": {"b": "}"}, "c": []}'], [True]),
        (["  ", "\t{", '"a": "{{"', "}"], [False, False, False, True]),
        (['{"a": [1, 2', "]", "}"], [False, False, True]),
        (['"just a string"', "{}"], [False, False]),  # not an object: never reported
        (["12", "}"], [False, False]),
    ],
)
@BOTH_WAYS
def test_closes_on_the_first_piece(find: bool, pieces: list[str], expected: list[bool]) -> None:
    scanner = ClosureScanner()
    with strings_by(find):
        assert [scanner.closes(p) for p in pieces] == expected


@BOTH_WAYS
def test_closes_handles_strings_escapes_and_brackets_inside_strings(find: bool) -> None:
    scanner = ClosureScanner()
    pieces = ['{"a": "}]\\', '"', ' {[", "b": [1, {"c": "\\\\"}]', ", ", '"d": "x"', "}  "]
    with strings_by(find):
        assert [scanner.closes(p) for p in pieces] == [False, False, False, False, False, True]


def test_complete_is_false_while_a_top_level_string_is_open() -> None:
    parser = PartialJSON()
    parser.feed('"abc')
    assert (parser.value, parser.complete) == ("abc", False)
    parser.feed('d"')
    assert (parser.value, parser.complete) == ("abcd", True)
    with pytest.raises(PartialJSONError, match="extra data"):
        parser.feed(" 1 ")


# ---- PartialJSON: the value after every delta, against an independent reference


class _NotStarted(Exception):
    """The reference's signal: the value at the end of the prefix has not begun to show."""


_SPACE = re.compile(r"[ \t\n\r]+")
_PLAIN = re.compile(r'[^"\\]+')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LOOSE = json.JSONDecoder(strict=False)  # what json.loads(..., strict=False) builds per call


def _reference_partial(prefix: str) -> tuple[object, bool]:
    """``(value, complete)`` PartialJSON should show after ``prefix`` of a valid JSON text.

    Written for clarity: a recursive descent over the whole prefix. What is
    shown: whole strings, numbers followed by a character that ends them, whole
    literals, the text so far of an open value string (without an escape cut off at its
    end, nor a lone ``\\uD8xx`` escape right at its end, whose pair may follow), and a
    key once its value has started. Numbers and literals that touch the end of the
    prefix may still grow, and are not shown.

    The properties call it after every delta, on every prefix of each text, so it skips
    whitespace and a string's plain characters with a regular expression (``_SPACE``,
    ``_PLAIN``) instead of a step of the loop per character, and decodes strings with one
    decoder (``_LOOSE``).
    """
    s = prefix
    i = 0

    def space() -> None:
        nonlocal i
        if run := _SPACE.match(s, i):
            i = run.end()

    def string() -> tuple[str, bool]:
        nonlocal i
        start = i + 1
        j = start
        last_unit = start
        while j < len(s) and s[j] != '"':
            plain = _PLAIN.match(s, j)
            if plain is not None:  # characters that are neither a quote nor an escape
                last_unit, j = plain.end() - 1, plain.end()
                continue
            width = 6 if s[j + 1 : j + 2] == "u" else 2  # an escape
            if j + width > len(s):
                break  # an escape cut off at the end
            last_unit = j  # the start of the last whole character or escape
            j += width
        if j < len(s) and s[j] == '"':
            i = j + 1
            return _LOOSE.decode(s[start - 1 : i]), True
        i = len(s)
        text = _LOOSE.decode('"' + s[start:j] + '"')
        unit = s[last_unit:j]
        if text and len(unit) == 6 and unit[:2] == "\\u" and 0xD800 <= int(unit[2:], 16) <= 0xDBFF:
            text = text[:-1]  # half a surrogate pair: its other half may follow
        return text, False

    def value() -> tuple[object, bool]:
        nonlocal i
        space()
        if i == len(s):
            raise _NotStarted
        char = s[i]
        if char == '"':
            return string()
        if char == "{":
            i += 1
            obj: dict[str, object] = {}
            while True:
                space()
                if i == len(s):
                    return obj, False
                if s[i] == "}":
                    i += 1
                    return obj, True
                if s[i] == ",":
                    i += 1
                    space()
                    if i == len(s):
                        return obj, False
                key, whole = string()
                space()
                if not whole or i == len(s):
                    return obj, False
                i += 1  # the colon
                try:
                    item, done = value()
                except _NotStarted:
                    return obj, False
                obj[key] = item
                if not done:
                    return obj, False
        if char == "[":
            i += 1
            arr: list[object] = []
            while True:
                space()
                if i == len(s):
                    return arr, False
                if s[i] == "]":
                    i += 1
                    return arr, True
                if s[i] == ",":
                    i += 1
                try:
                    item, done = value()
                except _NotStarted:
                    return arr, False
                arr.append(item)
                if not done:
                    return arr, False
        for word, literal in (("true", True), ("false", False), ("null", None)):
            if s.startswith(word, i):
                i += len(word)
                return literal, True
            if word.startswith(s[i:]):
                raise _NotStarted  # the rest of the word is still to come
        m = _NUMBER.match(s, i)
        if m is None or m.end() == len(s) or s[m.end()] in ".eE+-0123456789":
            raise _NotStarted  # it may go on ("-", "1", "1.", "1e", "1e-" at the end)
        i = m.end()
        return json.loads(m.group()), True

    try:
        return value()
    except _NotStarted:
        return None, False


def _texts(value: object, layout: int, ascii_only: bool) -> str:
    if layout == 0:
        return json.dumps(value, ensure_ascii=ascii_only)
    if layout == 1:
        return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=ascii_only, indent=layout - 1) + "\n"


def check_value_after_every_delta(
    value: object, cuts: list[int], layout: int, ascii_only: bool
) -> None:
    """After every delta ``PartialJSON`` shows what the reference reads from the text so
    far, in any layout of the text."""
    text = _texts(value, layout, ascii_only)
    parser = PartialJSON()
    fed = 0
    for piece in split(text, cuts):
        parser.feed(piece)
        fed += len(piece)
        assert (parser.value, parser.complete) == _reference_partial(text[:fed]), text[:fed]
    final = parser.value
    expected = json.loads(text)
    if isinstance(expected, (dict, list, str, bool)) or expected is None or text[-1] == "\n":
        assert final == expected
        assert parser.complete


@settings(max_examples=1500, deadline=None)
@given(
    json_values,
    st.lists(st.integers(min_value=0, max_value=400), max_size=40),
    st.integers(min_value=0, max_value=3),
    st.booleans(),
    st.integers(min_value=0, max_value=3),
    st.sampled_from(["", " ", ",", "}", "]", "\n"]),
)
def test_any_value_split_anyhow_is_read_and_ended_exactly(
    value: object, cuts: list[int], layout: int, ascii_only: bool, offset: int, after: str
) -> None:
    """Three properties of one kind of example, a JSON value cut anywhere: the partial
    value after every delta (1,500 examples), the final value (1,000 before), a scanner
    of any value's end at any start offset (1,000 before). Drawing an example is nearly
    all of its cost, so each is drawn once and checked every way, with the assertions
    each had alone (the end's cuts come from a list of up to 40 instead of 30)."""
    note("the value after every delta")
    check_value_after_every_delta(value, cuts, layout, ascii_only)
    note("the final value")
    check_final_value(value, cuts, ascii_only)
    note("any value's end")
    check_any_value_end(value, cuts, offset, after)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans())
def test_partial_json_one_character_at_a_time(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only) + " "
    parser = PartialJSON()
    for k, char in enumerate(text, 1):
        parser.feed(char)
        assert (parser.value, parser.complete) == _reference_partial(text[:k])
    assert parser.value == json.loads(text)


def test_reference_partial_itself() -> None:
    # The reference's own rules, spelled out (a wrong reference would pass wrong code).
    assert _reference_partial("") == (None, False)
    assert _reference_partial(' {"a') == ({}, False)
    assert _reference_partial('{"a": ') == ({}, False)
    assert _reference_partial('{"a": 1') == ({}, False)
    assert _reference_partial('{"a": 1,') == ({"a": 1}, False)
    assert _reference_partial('{"a": tr') == ({}, False)
    assert _reference_partial('{"a": true') == ({"a": True}, False)
    assert _reference_partial('{"a": "x\\u00') == ({"a": "x"}, False)
    assert _reference_partial('["\\ud83d') == ([""], False)
    assert _reference_partial('["\\ud83d\\ude80') == (["\U0001f680"], False)
    assert _reference_partial('[[1], {"b": [') == ([[1], {"b": []}], False)
    assert _reference_partial('"abc"') == ("abc", True)
    assert _reference_partial("12") == (None, False)
    assert _reference_partial("12 ") == (12, True)


def feed_all(pieces: list[str]) -> PartialJSON:
    parser = PartialJSON()
    for piece in pieces:
        parser.feed(piece)
    return parser


@pytest.mark.parametrize(
    ("pieces", "value"),
    [
        (["{", "}"], {}),
        (["[", "]"], []),
        (["[[", "]", ", {}", ", [[]]", "]"], [[], {}, [[]]]),
        (['{"a": {}', ', "b": []', "}"], {"a": {}, "b": []}),
        (['{"a"', ":", " 1", "}"], {"a": 1}),  # a colon alone, a number alone
        (['{"a": 1', ",", ' "b": 2}'], {"a": 1, "b": 2}),  # a comma alone
        (["[1", ",", "2", "]"], [1, 2]),
        (["[-", "1", "2.", "5e", "-", "3", "]"], [-12.5e-3]),  # a number in five deltas
        (["[1", "0", "0]"], [100]),
        (["[0.", "5, 1E", "+2]"], [0.5, 100.0]),
        (["[t", "r", "ue, nu", "ll, f", "alse]"], [True, None, False]),
        (['["a\\', 'nb"]'], ["a\nb"]),  # an escape cut after its backslash
        (['["\\u00', 'e9"]'], ["é"]),  # ... inside a \u escape
        (['["\\ud83d', '\\ude80"]'], ["\U0001f680"]),  # a surrogate pair in two deltas
        (['["\\', '"', '"]'], ['"']),  # an escaped quote in two deltas
        (['["x\\\\', '"]'], ["x\\"]),  # an escaped backslash then the closing quote
        ([' \n\t{ "a" \r: [ 1 , 2 ] } \n'], {"a": [1, 2]}),  # whitespace between tokens
        (["{\n", '  "a"', " ", ":", " ", "1", "\n", "}"], {"a": 1}),
        (['{"k\\"ey": "v"}'], {'k"ey': "v"}),  # an escape in a whole key
        (['{"k', '\\"', 'ey": "v"}'], {'k"ey': "v"}),  # ... and in one cut in three
    ],
)
def test_partial_json_deltas_that_cut_tokens(pieces: list[str], value: object) -> None:
    parser = feed_all(pieces)
    assert parser.value == value == json.loads("".join(pieces))
    assert parser.complete


@pytest.mark.parametrize(
    ("pieces", "shown"),
    [
        (['{"a": 1'], {}),  # 1 may be 10
        (['{"a": 1 '], {"a": 1}),
        (['{"a": -'], {}),
        (['{"a": 1.'], {}),
        (['{"a": 1e'], {}),
        (['{"a": fals'], {}),
        (['{"a": false'], {"a": False}),
        (['{"a": "x\\'], {"a": "x"}),
        (['{"a": "x\\u12'], {"a": "x"}),
        (['{"a": "x', "\\u12"], {"a": "x"}),
        (['{"a": "\\ud83d'], {"a": ""}),
        (['{"a": "\\ud83dz'], {"a": "\ud83dz"}),  # a lone surrogate, as json.loads gives
        (['{"a": "x", "b'], {"a": "x"}),
        (['{"a": "x", "b":'], {"a": "x"}),
        (['{"a": "x", "b": "'], {"a": "x", "b": ""}),
        (['{"a": [{"b": ['], {"a": [{"b": []}]}),
        (["[", '"ab', "c"], ["abc"]),
    ],
)
def test_partial_json_shows_what_is_whole(pieces: list[str], shown: object) -> None:
    parser = feed_all(pieces)
    assert parser.value == shown
    assert not parser.complete


@pytest.mark.parametrize(
    ("text", "value"),
    [("12 ", 12), ("-0.5\n", -0.5), ("true", True), ("null", None), ('"s"', "s"), ("[]", [])],
)
def test_partial_json_top_level_values(text: str, value: object) -> None:
    for pieces in ([text], list(text)):
        parser = feed_all(pieces)
        assert parser.complete
        assert parser.value == value
    parser = feed_all(["12"])  # a number at the end of the text may still grow
    assert (parser.value, parser.complete) == (None, False)


def test_partial_json_long_string_is_joined_when_read() -> None:
    # Past a length the open string is no longer copied on every delta, only on a read.
    parser = PartialJSON()
    parser.feed('{"a": "')
    body = "".join(chr(ord("a") + i % 26) for i in range(5000))
    for k in range(0, len(body), 7):
        parser.feed(body[k : k + 7])
        if k % 700 == 0:
            assert parser.value == {"a": body[: k + 7]}
    parser.feed('\\n", "k')
    assert parser.value == {"a": body + "\n"}
    parser.feed('": "x"}')
    assert parser.value == {"a": body + "\n", "k": "x"}
    assert parser.complete
    key = PartialJSON()  # a long key: shown once its value starts
    key.feed('{"')
    for k in range(0, len(body), 7):
        key.feed(body[k : k + 7])
        assert key.value == {}
    key.feed('": 1}')
    assert key.value == {body: 1}


def test_partial_json_value_is_one_object_updated_in_place() -> None:
    parser = PartialJSON()
    parser.feed('{"a": [1, "x')
    root = parser.value
    inner = root["a"]
    parser.feed('yz", {"b": 2}], "c": null}')
    assert parser.value is root and root["a"] is inner
    assert root == {"a": [1, "xyz", {"b": 2}], "c": None}


@pytest.mark.parametrize(
    "bad",
    [
        '{"a":1} x',  # trailing garbage
        "[1] ]",
        '"a" "b"',
        "1 2",
        "{}{}",
        "[1,,2]",
        "[,1]",
        "{,}",
        '{"a":}',
        '{"a" "b": 1}',
        '{"a": 1 "b": 2}',
        "{1: 2}",
        '{"a": 1,}',
        "[1,]",
        "[01]",
        "[1.e5]",
        "[1.5.3]",
        "[--1]",
        "[-Infinity]",
        "[NaN]",
        "[tru e]",
        "[truex]",
        '["\\x"]',
        '["\\u12G4"]',
        "]",
        ":",
        ",",
        "x",
    ],
)
def test_partial_json_malformed_in_any_chunking(bad: str) -> None:
    for pieces in ([bad], list(bad), [bad[: len(bad) // 2], bad[len(bad) // 2 :]]):
        parser = PartialJSON()
        with pytest.raises(PartialJSONError):
            for piece in pieces:
                parser.feed(piece)
            parser.feed(" ")  # ends a number or a word held back at the end
        with pytest.raises(PartialJSONError):
            parser.feed("1")  # stays failed
        with pytest.raises(PartialJSONError):
            parser.feed("")


def test_partial_json_error_messages_say_what_and_where() -> None:
    parser = PartialJSON()
    with pytest.raises(PartialJSONError, match=r"':'.*where ',' or '\}' was expected"):
        parser.feed('{"a": 1:')
    parser = PartialJSON()
    with pytest.raises(PartialJSONError, match="extra data"):
        parser.feed("[] [")
    parser = PartialJSON()
    with pytest.raises(PartialJSONError, match="invalid escape"):
        parser.feed('["a\\qb"]')


def test_partial_json_failed_inside_an_open_string_stays_failed() -> None:
    parser = PartialJSON()
    parser.feed('{"a": "abc')
    with pytest.raises(PartialJSONError):
        parser.feed("\\q")
    with pytest.raises(PartialJSONError):
        parser.feed("more string text")  # not taken as more of the string


def _peak_of(step: Callable[[], object]) -> int:
    """Peak bytes allocated while ``step`` runs: how much it copied, counted, not timed."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        step()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_a_long_number_one_digit_per_delta_is_not_reread() -> None:
    parser = PartialJSON()
    parser.feed('{"n": 1')
    for _ in range(100_000):
        parser.feed("7")
    # One more digit copies nothing like the 100,000 held so far (it was re-read whole).
    assert _peak_of(lambda: parser.feed("7")) < 10_000
    parser.feed("2")
    with pytest.raises(PartialJSONError, match="more than 4300 digits"):
        parser.feed("}")  # over Python's int digit limit: a typed error, not ValueError


def test_a_long_number_split_anyhow_gives_the_same_value() -> None:
    digits = "12345678901234567890" * 20
    for size in (1, 3, 7):
        parser = PartialJSON()
        parser.feed('{"n": -')
        for pos in range(0, len(digits), size):
            parser.feed(digits[pos : pos + size])
        parser.feed(".5e1, ")
        parser.feed('"m": 0}')
        assert parser.value == json.loads('{"n": -' + digits + '.5e1, "m": 0}')


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "x\\\\", "b": "\\"}\\"", "c": ["\\\\\\"]", "{"], "d": {}}',
        '{"p": "C:\\\\Users\\\\", "q": [["]", "\\\\\\\\"], {"r": "\\"{"}]}',
    ],
)
@BOTH_WAYS
def test_closes_at_every_cut_around_escaped_quotes_and_backslashes(find: bool, text: str) -> None:
    """Escaped quotes and backslash runs, cut anywhere: a run split in two keeps its
    parity across pieces (the trailing escape state)."""
    assert json.loads(text)  # valid JSON, closing at its last character
    for i in range(1, len(text)):
        for j in range(i, len(text)):
            scanner = ClosureScanner()
            pieces = [p for p in (text[:i], text[i:j], text[j:]) if p]
            with strings_by(find):
                results = [scanner.closes(p) for p in pieces]
            assert results == [False] * (len(pieces) - 1) + [True]
