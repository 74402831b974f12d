"""Partial output while the answer streams: ``PartialOutput`` events on ``run_stream``.

In tool mode the answer is the arguments of a ``final_result`` call, which arrive as
``ToolCallDelta`` fragments; in native mode it is the answer text (``TextDelta``). Each
is read with :class:`~toolwire.wire.jsonscan.PartialJSON` (linear in the answer, one
pass), and a ``PartialOutput`` carries the value so far (unwrapped for a plain type)
after each fragment of a short answer, and ever fewer of a long one (:class:`_Reader`). Nothing is watched for a run nobody
streams: the loop wraps its emitter only when someone listens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import PartialJSONError
from ..wire.events import TextDelta, ToolCallDelta, ToolCallStarted
from ..wire.jsonscan import PartialJSON
from .spec import FINAL_RESULT, OutputSpec

__all__ = ["PartialOutput", "PartialWatch"]


@dataclass(slots=True)
class PartialOutput:
    """The structured output so far, while its call's arguments (or its JSON answer) stream.

    Attributes:
        value: The JSON value read so far (a dict for an object type; for a plain type,
            the value under ``"result"``, ``None`` until it starts). It is the parser's
            live object, updated in place by later fragments: copy it to keep it.
        index: The ``final_result`` call's index in its turn (``None`` in native mode,
            where the answer is the text).
    """

    value: Any
    index: int | None = None


class _Reader:
    """One answer's parser, and how much it was fed since its value was last read.

    Reading ``PartialJSON.value`` joins a long string read so far, so reading it after
    every fragment would be quadratic in a long answer. The value is read when the text
    fed since the last read is at least a quarter of all fed so far (or the JSON
    closed): every fragment of a short answer, ever fewer of a long one, and linear
    work in all (the reads' sizes grow geometrically).
    """

    __slots__ = ("fed", "parser", "since")

    def __init__(self) -> None:
        self.parser = PartialJSON()
        self.fed = 0
        self.since = 0

    def feed(self, fragment: str) -> bool:
        """Feed ``fragment``; whether the value is due to be read."""
        self.parser.feed(fragment)
        self.fed += len(fragment)
        self.since += len(fragment)
        if self.since * 4 < self.fed and not self.parser.complete:
            return False
        self.since = 0
        return True


class PartialWatch:
    """Reads the output's fragments out of a run's events and reports its progress.

    Args:
        spec: The output type.
        text: Watch the answer text (native mode) instead of ``final_result`` calls.
        emit: Where ``PartialOutput`` events go (after the event that caused them).
    """

    def __init__(self, spec: OutputSpec, *, text: bool, emit: Callable[[Any], None]) -> None:
        self._spec = spec
        self._text = text
        self._emit = emit
        self._readers: dict[int | None, _Reader | None] = {}  # None: gave up on it

    def __call__(self, event: Any) -> None:
        """Pass ``event`` on, then a ``PartialOutput`` if it moved the output."""
        self._emit(event)
        kind = type(event)
        if kind is ToolCallDelta and not self._text:
            self._feed(event.index, event.arguments)
        elif kind is ToolCallStarted and not self._text:
            if event.name == FINAL_RESULT:
                self._readers[event.index] = _Reader()
        elif kind is TextDelta and self._text:
            if None not in self._readers:
                self._readers[None] = _Reader()
            self._feed(None, event.text)

    def reset(self) -> None:
        """A new request: its turn's fragments start afresh."""
        self._readers.clear()

    def _feed(self, index: int | None, fragment: str) -> None:
        reader = self._readers.get(index)
        if reader is None:
            return
        try:
            due = reader.feed(fragment)
        except PartialJSONError:  # not JSON after all: the final check will say so
            self._readers[index] = None
            return
        if not due:
            return
        value = self._spec.partial(reader.parser.value)
        if value is not None:
            self._emit(PartialOutput(value, index))
