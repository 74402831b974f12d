"""Durations in human units, and the time axis of a run.

The trace page draws a whole run on one time axis: its ticks fall on round steps
(1, 2 or 5 of a unit; 15 s, 30 s, whole minutes beyond that) and read as a person would
say them — ``0``, ``500 ms``, ``1.5 s``, ``1 min 2 s`` — never ``4390.7 ms``. A run that
paused for approval may wait hours for its answer: drawn to scale, that wait would
crush everything else to a pixel, so a long pause is collapsed into a break of fixed
width (:class:`Scale`), after which the ticks count again from the resume (``+0``,
``+500 ms``), on the same step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["MAX_TICKS", "Scale", "human_duration", "tick_step", "ticks"]

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


def ticks(span: float, step: float | None = None) -> list[float]:
    """The tick positions (seconds from the axis's origin) of an axis ``span`` long:
    0, then every ``step`` (default :func:`tick_step`) up to the end's last step."""
    step = step or tick_step(span)
    count = int(span / step + 1e-9)
    # Multiplied, not summed, so that 3 x 0.1 lands where 0.3 does.
    return [round(k * step, 9) for k in range(count + 1)]


BREAK_SHARE = 0.05
"""The share of the axis's width a collapsed pause takes."""

COLLAPSED_PAUSE = 10.0
"""A pause is collapsed when longer than this many seconds and than the rest of the run."""


class Scale:
    """Seconds on a run's clock as a fraction of the axis's width (0 at the origin, 1
    at the end), long pauses collapsed into breaks.

    Args:
        origin: The axis's start (the run's start, ``time.time()``).
        span: Its length in seconds.
        pauses: ``(start, end)`` of each pause; those longer than
            :data:`COLLAPSED_PAUSE` and than the rest of the run become breaks.
    """

    def __init__(self, origin: float, span: float, pauses: Sequence[tuple[float, float]] = ()):
        self.origin, self.span = origin, span
        self.breaks: list[tuple[float, float]] = []
        cursor = origin
        for start, end in sorted(pauses):
            if start >= cursor and end <= origin + span and self._long(end - start):
                self.breaks.append((start, end))
                cursor = end
        self.pieces = self._pieces()
        active = sum(end - start for start, end in self.pieces)
        self.unit = (1.0 - BREAK_SHARE * len(self.breaks)) / max(active, 1e-9)
        self.step = tick_step(active)

    def _long(self, length: float) -> bool:
        """Whether a pause this long is collapsed: longer than the rest of the run."""
        return length > COLLAPSED_PAUSE and length > self.span - length

    def _pieces(self) -> list[tuple[float, float]]:
        """The stretches of time drawn to scale: between the breaks."""
        found, start = [], self.origin
        for begin, end in self.breaks:
            found.append((start, begin))
            start = end
        found.append((start, self.origin + self.span))
        return found

    def at(self, when: float) -> float:
        """Where ``when`` falls, as a fraction of the width (monotonic in ``when``)."""
        x = 0.0
        for number, (start, end) in enumerate(self.pieces):
            if when <= end or number == len(self.pieces) - 1:
                return x + max(when - start, 0.0) * self.unit
            x += (end - start) * self.unit
            begin, resumed = self.breaks[number]
            if when < resumed:
                return x + BREAK_SHARE * (when - begin) / (resumed - begin)
            x += BREAK_SHARE
        return x  # unreachable: the last piece returns

    def ticks(self) -> list[tuple[float, str]]:
        """``(fraction, label)`` of each tick: from the origin, then after each break
        from its resume (labels ``+0``, ``+500 ms``...), every :attr:`step`."""
        found = []
        for number, (start, end) in enumerate(self.pieces):
            prefix = "+" if number else ""
            found += [
                (self.at(start + t), prefix + human_duration(t))
                for t in ticks(end - start, self.step)
            ]
        return found
