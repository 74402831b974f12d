"""The trace page's time axis: human units, round steps, one scale for a whole run."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.observe.timescale import (
    BREAK_SHARE,
    MAX_TICKS,
    Scale,
    human_duration,
    tick_step,
    ticks,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0"),
        (0.00025, "250 µs"),
        (0.5, "500 ms"),
        (0.0123, "12.3 ms"),
        (0.9997, "1000 ms"),
        (1.0, "1 s"),
        (1.5, "1.5 s"),
        (4.3907, "4.39 s"),
        (60.0, "1 min"),
        (62.0, "1 min 2 s"),
        (3 * 0.1, "300 ms"),  # 0.30000000000000004
        (3600.0, "1 h"),
        (7500.0, "2 h 5 min"),
        (-0.5, "-500 ms"),
    ],
)
def test_durations_read_as_a_person_says_them(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        (4.3907, ["0", "1 s", "2 s", "3 s", "4 s"]),
        (0.788, ["0", "100 ms", "200 ms", "300 ms", "400 ms", "500 ms", "600 ms", "700 ms"]),
        (2.2, ["0", "500 ms", "1 s", "1.5 s", "2 s"]),
        (185.0, ["0", "30 s", "1 min", "1 min 30 s", "2 min", "2 min 30 s", "3 min"]),
    ],
)
def test_ticks_fall_on_round_steps(span: float, expected: list[str]) -> None:
    assert [human_duration(t) for t in ticks(span)] == expected


@given(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
def test_every_span_gets_between_three_and_eight_even_steps(span: float) -> None:
    step = tick_step(span)
    found = ticks(span)
    assert found[0] == 0.0 and 3 <= len(found) - 1 <= MAX_TICKS
    assert found[-1] <= span * (1 + 1e-9) and span - found[-1] < step
    for k, t in enumerate(found):  # each a whole number of steps, not a running sum
        assert math.isclose(t, k * step, rel_tol=1e-9, abs_tol=1e-9)
    assert len({human_duration(t) for t in found}) == len(found)  # no two labels alike


def test_a_scale_without_long_pauses_is_linear() -> None:
    scale = Scale(100.0, 8.0, [(102.0, 103.0)])  # 1 s of 8: drawn to scale
    assert scale.breaks == []
    assert [scale.at(100.0 + t) for t in (0.0, 2.0, 8.0)] == [0.0, 0.25, 1.0]
    assert [label for _, label in scale.ticks()] == [f"{k} s" if k else "0" for k in range(9)]


def test_a_long_pause_becomes_a_break_and_the_ticks_count_from_the_resume() -> None:
    # 2 s of work, a 2-hour pause, 2 s of work.
    scale = Scale(0.0, 7204.0, [(2.0, 7202.0)])
    assert scale.breaks == [(2.0, 7202.0)]
    assert math.isclose(scale.at(7202.0) - scale.at(2.0), BREAK_SHARE)
    assert math.isclose(scale.at(2.0), scale.at(7204.0) - scale.at(7202.0))  # same unit
    assert scale.at(0.0) == 0.0 and math.isclose(scale.at(7204.0), 1.0)
    labels = [label for _, label in scale.ticks()]
    assert labels == [
        "0",
        "500 ms",
        "1 s",
        "1.5 s",
        "2 s",
        "+0",
        "+500 ms",
        "+1 s",
        "+1.5 s",
        "+2 s",
    ]


@given(
    st.lists(st.floats(min_value=0, max_value=10_000), min_size=2, max_size=8),
    st.lists(st.floats(min_value=-10, max_value=10_010), min_size=2, max_size=20),
)
def test_a_scale_keeps_time_in_order(edges: list[float], times: list[float]) -> None:
    edges = sorted(edges)
    pauses = list(itertools.pairwise(edges))[::2]
    scale = Scale(0.0, 10_000.0, pauses)
    places = [scale.at(t) for t in sorted(times)]
    assert places == sorted(places)
    assert all(-1e-6 <= scale.at(t) <= 1 + 1e-6 for t in times if 0 <= t <= 10_000)
