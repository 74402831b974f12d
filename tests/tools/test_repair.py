"""repair_json: strict first, lenient after, RepairError when nothing can be read."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import CallerError, RepairError
from toolwire.tools import loads_lenient, repair_json
from toolwire.tools.repair import MAX_REPAIR_CHARS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import contextlib

from repair_corpus import KINDS, build_corpus, exact

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=10,
)
# Generating nested JSON values is what costs here (not repairing them): fewer examples.
NESTED = settings(max_examples=200, deadline=None)


def _holds_json(value: Any) -> bool:
    """A top-level string that itself holds an object or array is decoded once more."""
    return isinstance(value, str) and value.strip().startswith(('"', "{", "["))


@NESTED
@given(json_values)
def test_valid_json_is_returned_as_json_loads_would(value: Any):
    text = json.dumps(value)
    if _holds_json(value):
        return
    result, repaired = loads_lenient(text)
    assert not repaired
    assert exact(result, json.loads(text))


@settings(max_examples=1000, deadline=None)
@given(st.text())
def test_any_text_parses_or_raises_repair_error(text: str):
    with contextlib.suppress(RepairError):
        repair_json(text)


@NESTED
@given(st.dictionaries(st.text(max_size=8), json_values, min_size=1, max_size=4), st.data())
def test_any_cut_off_object_does_not_crash(value: dict[str, Any], data: st.DataObject):
    text = json.dumps(value)
    cut = data.draw(st.integers(min_value=1, max_value=len(text)))
    with contextlib.suppress(RepairError):
        repair_json(text[:cut])


@NESTED
@given(st.dictionaries(st.text(max_size=8), json_values, min_size=1, max_size=4))
def test_closing_brackets_cut_off_are_restored(value: dict[str, Any]):
    text = json.dumps(value)
    stripped = text.rstrip("]}")
    if stripped.endswith(('"', ",", ":")) and text != stripped and stripped[-1] != '"':
        return
    assert exact(repair_json(stripped), value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1,}', {"a": 1}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ("{'a': 'b'}", {"a": "b"}),
        ("{a: 1, b_c: 'x'}", {"a": 1, "b_c": "x"}),
        ('{"unit": celsius, "n": 2}', {"unit": "celsius", "n": 2}),
        ("{'ok': True, 'v': None, 'f': False}", {"ok": True, "v": None, "f": False}),
        ('{\n  "a": 1, // one\n  /* two */ "b": 2 # three\n}', {"a": 1, "b": 2}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here you go: {"a": 1} hope it helps', {"a": 1}),
        ('<tool_call>{"a": 1}</tool_call>', {"a": 1}),
        ('{"code": "line1\nline2\n"}', {"code": "line1\nline2\n"}),
        ('{\n "a": 1\n "b": 2\n}', {"a": 1, "b": 2}),
        ('{"t": "say "hi" now", "n": 1}', {"t": 'say "hi" now', "n": 1}),
        ('"{\\"a\\": 1}"', {"a": 1}),
        ('{"p": "C:\\Users\\new\\temp.txt"}', {"p": "C:\\Users\\new\\temp.txt"}),
        ("{\u201ca\u201d: \u201cb\u201d}", {"a": "b"}),
        ('{"a": 1}}', {"a": 1}),
        ('{"a": "\\u00e9\\n"', {"a": "é\n"}),
        ('{"smile": "\\ud83d\\ude00",}', {"smile": "😀"}),
        ("[1 2 3]", [1, 2, 3]),
        ("{'it': 'don\\'t'}", {"it": "don't"}),
        ('{"color": #fff}', {"color": "#fff"}),
        ("42", 42),
        ("True", True),
    ],
)
def test_defects(text: str, expected: Any):
    assert exact(repair_json(text), expected)


def test_valid_escapes_are_kept_when_the_string_has_no_invalid_one():
    assert repair_json('{"a": "tab\\there",}') == {"a": "tab\there"}


@pytest.mark.parametrize("text", ["", "   ", "no json here", "Sure, I can help with that."])
def test_nothing_to_recover(text: str):
    with pytest.raises(RepairError) as info:
        repair_json(text)
    assert info.value.fault == "model"


def test_runaway_nesting_is_a_repair_error():
    with pytest.raises(RepairError, match="nested too deeply"):
        repair_json("[" * 100_000)


def test_non_string_input_is_a_caller_error():
    with pytest.raises(CallerError):
        repair_json(b"{}")  # type: ignore[arg-type]


def test_corpus_recovery_rate():
    corpus = build_corpus()
    assert len(corpus) >= 200 and len(KINDS) >= 18
    hits = sum(exact(_safe(case.text), case.good) for case in corpus)
    assert hits / len(corpus) >= 0.975


def _safe(text: str) -> Any:
    try:
        return repair_json(text)
    except RepairError:
        return RepairError


# -- bounded, typed failures --------------------------------------------------------


def test_an_integer_over_the_digit_limit_is_a_repair_error() -> None:
    with pytest.raises(RepairError, match="longer than Python reads"):
        repair_json('{"x": ' + "1" * 5000 + "}")  # valid JSON that int() refuses
    with pytest.raises(RepairError, match="longer than Python reads"):
        repair_json("{x: " + "1" * 5000 + "}")


def test_nesting_json_repair_refuses_is_a_repair_error() -> None:
    with pytest.raises(RepairError, match="could not recover"):
        repair_json("{[" * 200)


def test_oversized_malformed_text_is_refused_with_feedback() -> None:
    text = '{"a": "' + '"' * (MAX_REPAIR_CHARS + 1) + '"}'
    with pytest.raises(RepairError, match="too long to repair") as info:
        repair_json(text)
    assert "valid JSON" in (info.value.hint or "")
    assert repair_json('{"a": "' + "x" * (MAX_REPAIR_CHARS + 1) + '"}')  # valid JSON: no limit


def test_a_quote_before_a_comma_does_not_copy_the_rest_of_the_text() -> None:
    """Work counted, not timed: deciding whether a quote closes a string looked at a copy
    of the whole remaining text (``text[pos:]``), once per ``",`` — quadratic on junk."""
    import tracemalloc

    from toolwire.tools.repair import _member_follows

    text = ", word" + " x" * 500_000
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        _member_follows(text, 1)
        copied = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert copied < 10_000
