"""Durations in human units, and the ticks of a time axis.

The trace page draws a whole run on one time axis: its ticks fall on round steps
(1, 2 or 5 of a unit; 15 s, 30 s, whole minutes beyond that) and read as a person would
say them — ``0``, ``500 ms``, ``1.5 s``, ``1 min 2 s`` — never ``4390.7 ms``.
"""

from __future__ import annotations

import math

__all__ = ["MAX_TICKS", "human_duration", "tick_step", "ticks"]

MAX_TICKS = 8
"""At most this many steps between the axis's first tick (0) and its end."""

# Steps of a minute and more: what a clock's face shows, not 100 s.
_LONG_STEPS = (15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0)


def human_duration(seconds: float) -> str:
    """``seconds`` in the largest unit that keeps it readable, to three figures.

    ``0``, ``250 µs``, ``4.39 s``, ``1 min 2 s``, ``2 h 5 min``; a negative duration
    (a clock that stepped back) keeps its sign.
    """
    if seconds < 0:
        return "-" + human_duration(-seconds)
    if seconds >= 60.0:
        return _clock(seconds)
    if seconds == 0:
        return "0"
    value, unit = (seconds * 1e6, "µs") if seconds < 1e-3 else (seconds * 1e3, "ms")
    if seconds >= 1.0:
        value, unit = seconds, "s"
    return f"{_figures(value)} {unit}"


def _clock(seconds: float) -> str:
    """A minute or more: whole minutes and seconds, or hours and minutes."""
    if seconds < 3600.0:
        minutes, rest = divmod(round(seconds), 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(round(seconds / 60.0), 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def _figures(value: float) -> str:
    """Three significant figures, without a trailing ``.0`` (``1.5``, ``250``, ``4.39``).
    A value that rounds up to the next unit (``999.7`` ms) stays in this one (``1000``)."""
    text = f"{value:.3g}"
    return f"{value:.0f}" if "e" in text else text


def tick_step(span: float) -> float:
    """The round step that cuts ``span`` seconds into at most :data:`MAX_TICKS` parts."""
    if span <= 0:
        return 1.0
    target = span / MAX_TICKS
    if target < 10.0:
        power = 10.0 ** math.floor(math.log10(target))
        for factor in (1.0, 2.0, 5.0, 10.0):
            if factor * power >= target:
                return factor * power
    for step in _LONG_STEPS:
        if step >= target:
            return step
    return 3600.0 * math.ceil(target / 3600.0)


def ticks(span: float) -> list[float]:
    """The tick positions (seconds from the axis's origin) of an axis ``span`` long:
    0, then every :func:`tick_step` up to and including the end's last step."""
    step = tick_step(span)
    count = int(span / step + 1e-9)
    # Multiplied, not summed, so that 3 x 0.1 lands where 0.3 does.
    return [round(k * step, 9) for k in range(count + 1)]
