"""Batch planning: safe runs batch together, unsafe calls run alone, order is kept."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.run.plan import Batch, plan_batches


def test_examples() -> None:
    assert plan_batches([]) == []
    assert plan_batches([True]) == [Batch((0,), parallel=False)]
    assert plan_batches([True, True, False, True, False, False, True, True, True]) == [
        Batch((0, 1), parallel=True),
        Batch((2,), parallel=False),
        Batch((3,), parallel=False),
        Batch((4,), parallel=False),
        Batch((5,), parallel=False),
        Batch((6, 7, 8), parallel=True),
    ]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.booleans(), max_size=30))
def test_properties(safe: list[bool]) -> None:
    batches = plan_batches(safe)
    flat = [i for b in batches for i in b.calls]
    assert flat == list(range(len(safe)))  # every call once, in call order
    for batch in batches:
        if any(not safe[i] for i in batch.calls):
            assert batch.calls and len(batch.calls) == 1 and not batch.parallel
        assert batch.parallel == (len(batch.calls) > 1)
    for first, second in itertools.pairwise(batches):
        # maximal: two neighbouring batches are never both all-safe
        assert not (all(safe[i] for i in first.calls) and all(safe[i] for i in second.calls))
