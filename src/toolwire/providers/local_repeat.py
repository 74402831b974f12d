"""Stopping a generation that repeats itself (the embedded model).

A small model can fall into a loop: the same JSON object, line or sentence written
again and again until ``max_tokens`` (measured: 140 s of repeated JSON calls from
Qwen2.5-Coder-0.5B on two cores under ``tool_choice="required"``). The text after the
second copy is worth nothing, and the user waits for it. :class:`RepeatGuard` watches
the generated text as it streams and says when its end is one unit repeated: a unit
of 1 to :data:`MAX_PERIOD` characters written at least :data:`MIN_REPEATS` times in a
row and spanning at least :data:`MIN_SPAN` characters (so ``----`` or a short list of
equal items is not a loop). The local provider then stops generating, ends the turn
with finish reason ``length`` (the run's outcome is ``length``, as for a turn cut at
the token limit) and adds a ``repetition_stopped`` notice that says what repeated.

Each piece costs a bounded amount of work (the check reads at most the last
``MAX_PERIOD * MIN_REPEATS`` characters), so a whole generation is checked in time
linear in its length.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_PERIOD", "MIN_REPEATS", "MIN_SPAN", "RepeatGuard", "Repetition"]

MAX_PERIOD = 256
"""The longest repeating unit looked for, in characters."""

MIN_REPEATS = 4
"""Copies of a unit in a row that count as a loop (when they span :data:`MIN_SPAN`)."""

MIN_SPAN = 256
"""Characters the copies must cover together: short units must repeat more often."""

_KEEP = MAX_PERIOD * MIN_REPEATS


@dataclass(frozen=True, slots=True)
class Repetition:
    """What repeated: the unit and how many copies of it end the text."""

    unit: str
    copies: int

    @property
    def message(self) -> str:
        """One line for the notice (the unit shortened and escaped)."""
        shown = self.unit if len(self.unit) <= 60 else self.unit[:59] + "…"
        return (
            f"the model wrote the same {len(self.unit)}-character text at least "
            f"{self.copies} times in a row ({shown!r}): generation was stopped early, as if cut at the token limit"
        )


class RepeatGuard:
    """Watches streamed text; :meth:`feed` returns a :class:`Repetition` once its end
    is one unit repeated (see the module docstring)."""

    def __init__(self) -> None:
        self._tail = ""

    def feed(self, text: str) -> Repetition | None:
        """Add the next piece of generated text; the repetition it completes, if any."""
        if not text:
            return None
        self._tail = (self._tail + text)[-_KEEP:]
        return _repetition(self._tail)


def _repetition(tail: str) -> Repetition | None:
    """The shortest unit whose copies end ``tail`` often and long enough, if any."""
    size = len(tail)
    last = tail[-1]
    for period in range(1, min(MAX_PERIOD, size // MIN_REPEATS) + 1):
        copies = max(MIN_REPEATS, -(-MIN_SPAN // period))  # ceil(MIN_SPAN / period)
        span = period * copies
        if span > size:
            continue
        # Cheap tests first: the last character must recur one period and span back.
        if tail[-1 - period] != last or tail[-span] != tail[-period]:
            continue
        unit = tail[-period:]
        if tail[-span:] == unit * copies:
            return Repetition(unit, copies)
    return None
