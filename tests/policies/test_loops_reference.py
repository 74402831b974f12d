"""Loop detection against a reference written out plainly: the detector counts a
round's signatures and outputs with dict views and sets, and judges repeats only once a
signature reached a threshold; over any sequence of rounds its verdicts must be the
plain per-call algorithm's."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.messages import ToolResult, ToolStatus
from toolwire.policies.loops import (
    LoopDetector,
    LoopPolicy,
    LoopVerdict,
    LoopWarningNote,
    call_signature,
)
from toolwire.turn import ToolRequest


class Reference:
    """The detector's rules, call by call."""

    def __init__(self, policy: LoopPolicy) -> None:
        self.policy = policy
        self.rounds_with: Counter[str] = Counter()
        self.seen: set[tuple[str, str]] = set()
        self.stalled = 0

    def observe(self, requests: list[ToolRequest], results: list[ToolResult]) -> LoopVerdict:
        signatures = [
            call_signature(r.name, r.input if r.error is None else r.raw_arguments)
            for r in requests
        ]
        first: dict[str, int] = {}
        for position, signature in enumerate(signatures):
            first.setdefault(signature, position)
        new = False
        for signature in first:
            new = new or self.rounds_with[signature] == 0
            self.rounds_with[signature] += 1
        for signature, result in zip(signatures, results, strict=False):
            if result.status is ToolStatus.OK:
                new = new or (signature, result.content) not in self.seen
                self.seen.add((signature, result.content))
        self.stalled = 0 if new else self.stalled + 1
        verdict = LoopVerdict()
        warn, stop = self.policy.repeat_warn, self.policy.repeat_stop
        for signature, position in first.items():
            count = self.rounds_with[signature]
            tool = results[position].name if position < len(results) else signature
            if stop and count >= stop:
                verdict.stop = ("repeated_call", tool, count)  # type: ignore[assignment]
                return verdict
            if warn and count >= warn:
                verdict.warnings.append(LoopWarningNote(position, "repeated_call", "", count))
        if results:
            warn, stop, last = self.policy.stall_warn, self.policy.stall_stop, len(results) - 1
            if stop and self.stalled >= stop:
                verdict.stop = ("no_progress", results[last].name, self.stalled)  # type: ignore[assignment]
            elif warn and self.stalled >= warn:
                verdict.warnings.append(LoopWarningNote(last, "no_progress", "", self.stalled))
        return verdict


call = st.tuples(
    # Few names, so that rounds repeat them; more, so that rounds of names new to the
    # run (counted without signatures until a name comes back) are common; one with
    # the "(" that makes such a round signed at once.
    st.sampled_from(["a", "b", "c", "d", "e", "f(1"]),
    st.integers(0, 2),  # the argument
    st.booleans(),  # parsed (else raw text)
    st.sampled_from([ToolStatus.OK, ToolStatus.ERROR]),
    st.sampled_from(["x", "y"]),  # the output
)
thresholds = st.tuples(st.integers(0, 3), st.integers(0, 5)).filter(
    lambda t: not (t[0] and t[1] and t[0] >= t[1])
)


@settings(max_examples=200, deadline=None)
@given(thresholds, thresholds, st.lists(st.lists(call, max_size=5), max_size=7))
def test_the_detector_judges_every_round_as_the_reference(repeat, stall, rounds) -> None:
    policy = LoopPolicy(
        repeat_warn=repeat[0], repeat_stop=repeat[1], stall_warn=stall[0], stall_stop=stall[1]
    )
    detector, reference = LoopDetector(policy), Reference(policy)
    for calls in rounds:
        requests = [
            ToolRequest(f"c{k}", name, f'{{"v": {v}', {"v": v} if parsed else None,
                        None if parsed else "not JSON", index=k)
            for k, (name, v, parsed, _, _) in enumerate(calls)
        ]  # fmt: skip
        results = [
            ToolResult(f"c{k}", name, output, status)
            for k, (name, _, _, status, output) in enumerate(calls)
        ]
        got, want = detector.observe(requests, results), reference.observe(requests, results)
        assert detector.stalled == reference.stalled
        assert [(w.position, w.kind, w.count) for w in got.warnings] == [
            (w.position, w.kind, w.count) for w in want.warnings
        ]
        stop = None if got.stop is None else (got.stop.kind, got.stop.tool, got.stop.count)
        assert stop == want.stop
        if got.stop is not None:
            break
