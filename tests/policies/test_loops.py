"""Loop detection: repeated signatures and stalled rounds warn, then stop."""

from __future__ import annotations

import pytest

from toolwire.errors import CallerError, LoopDetectedError
from toolwire.messages import ToolResult, ToolStatus
from toolwire.policies.loops import (
    LoopDetector,
    LoopPolicy,
    call_signature,
    request_signature,
    round_signatures,
)
from toolwire.turn import ToolRequest

from ..run.helpers import request


def test_signature_is_canonical() -> None:
    assert call_signature("f", {"b": 2, "a": [1, {"d": 1, "c": 2}]}) == call_signature(
        "f", {"a": [1, {"c": 2, "d": 1}], "b": 2}
    )
    assert call_signature("f", {"a": 1}) == 'f({"a":1})'
    assert call_signature("f", {"a": 1}) != call_signature("g", {"a": 1})
    assert request_signature(request("f", "{bad")) == 'f("{bad")'


def test_a_rounds_signatures_are_each_calls() -> None:
    """The round's comprehension over the C encoder, and its way back call by call (a
    call that did not parse, a value JSON cannot encode), give request_signature's."""
    parsed = [
        request("f", {"b": 2, "a": [1, {"d": 1.5, "c": None}]}),
        request("g", {"s": "é\n\u0000", "t": True}),
        request("h", {}),
    ]
    unparsed = [*parsed, request("f", "{bad")]
    not_json = [*parsed, ToolRequest("c", "f", "", {"x": {1, 2}})]  # a set: its repr
    for requests in (parsed, unparsed, not_json, []):
        assert round_signatures(requests) == [request_signature(r) for r in requests]
    assert round_signatures(not_json)[-1] == "f({'x': {1, 2}})"


def test_a_round_of_tools_new_to_the_run_is_signed_when_one_comes_back() -> None:
    """A round whose every call names a tool no earlier round called is counted without
    its signatures; a later round that calls one of them again counts it as a repeat,
    and its output as seen."""
    detector = LoopDetector(LoopPolicy(repeat_warn=2, repeat_stop=4, stall_warn=1, stall_stop=0))
    first = [request("a", {"k": 1}), request("b", {"k": 2})]
    verdict = detector.observe(first, [_ok("a"), _ok("b")])
    assert verdict.warnings == [] and verdict.stop is None and detector.stalled == 0
    assert not detector._rounds_with  # nothing signed yet
    # The same call of "a", its arguments spelled otherwise: a repeat, the same output.
    again = ToolRequest("call_0", "a", '{ "k" : 1 }', {"k": 1})
    verdict = detector.observe([again], [_ok("a")])
    assert [(w.kind, w.count) for w in verdict.warnings] == [
        ("repeated_call", 2),
        ("no_progress", 1),
    ]
    assert set(detector._rounds_with) == {'a({"k":1})'}  # "b" is still unsigned
    verdict = detector.observe([request("b", {"k": 2})], [_ok("b", "other")])
    assert [(w.kind, w.count) for w in verdict.warnings] == [("repeated_call", 2)]


def _ok(name: str, content: str = "same") -> ToolResult:
    return ToolResult("x", name, content, ToolStatus.OK)


def test_repeated_call_warns_then_stops() -> None:
    detector = LoopDetector(LoopPolicy(repeat_warn=2, repeat_stop=3, stall_warn=0, stall_stop=0))
    call = request("search", {"q": "x"})
    assert detector.observe([call], [_ok("search")]).warnings == []
    verdict = detector.observe([call, call], [_ok("search"), _ok("search")])
    assert [(w.position, w.kind, w.count) for w in verdict.warnings] == [(0, "repeated_call", 2)]
    assert verdict.stop is None
    verdict = detector.observe([request("other"), call], [_ok("other", "new"), _ok("search")])
    assert isinstance(verdict.stop, LoopDetectedError)
    assert verdict.stop.kind == "repeated_call" and verdict.stop.count == 3
    assert 'search({"q":"x"})' in str(verdict.stop)


def test_no_progress_counts_consecutive_rounds() -> None:
    detector = LoopDetector(LoopPolicy(repeat_warn=0, repeat_stop=0, stall_warn=2, stall_stop=3))
    a, b = request("read", {"p": 1}), request("read", {"p": 2})
    detector.observe([a], [_ok("read", "1")])  # new
    detector.observe([b], [_ok("read", "2")])  # new
    assert detector.observe([a], [_ok("read", "1")]).warnings == []  # stalled 1
    verdict = detector.observe([b], [_ok("read", "2")])  # stalled 2
    assert [(w.kind, w.count, w.position) for w in verdict.warnings] == [("no_progress", 2, 0)]
    assert detector.observe([a], [_ok("read", "changed")]).warnings == []  # new output: progress
    assert detector.stalled == 0
    detector.observe([a], [_ok("read", "changed")])
    detector.observe([a], [_ok("read", "changed")])
    stop = detector.observe([a], [_ok("read", "changed")]).stop
    assert stop is not None and stop.kind == "no_progress" and stop.count == 3


def test_zero_disables() -> None:
    detector = LoopDetector(LoopPolicy(0, 0, 0, 0))
    call = request("f")
    for _ in range(20):
        verdict = detector.observe([call], [_ok("f")])
        assert verdict.warnings == [] and verdict.stop is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"repeat_warn": -1},
        {"repeat_warn": 5, "repeat_stop": 5},
        {"stall_stop": 1.5},
        {"stall_warn": True},
    ],
)
def test_bad_policy(kwargs: dict[str, object]) -> None:
    with pytest.raises(CallerError):
        LoopPolicy(**kwargs)  # type: ignore[arg-type]
