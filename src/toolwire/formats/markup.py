"""The parsing skeleton shared by the markup formats (DeepSeek, GLM, Kimi).

:class:`MarkupStream` is a cursor over a small buffer with one method per parser
state; each state reads up to the next marker it cares about with
:class:`~toolwire.formats.base.MarkerSet` (only a possible marker prefix is held back),
so content and arguments stream as they arrive and the cost stays linear.
:class:`ThinkStream` adds ``<think>`` reasoning; :class:`ArgumentWriter` builds an
arguments JSON object from key/value pieces, typed by the tool's schema.
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ..checks import reject_json_constant
from ..wire.events import ToolCallDelta
from ..wire.jsonscan import ClosureScanner
from .base import Format, FormatStream
from .coerce import json_string, schema_types, value_to_json
from .markers import MarkerSet, continues, marker_set

__all__ = ["THINK_CLOSE", "THINK_OPEN", "ArgumentWriter", "MarkupStream", "ThinkStream"]

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
_SPACE = re.compile(r"\s*")


class MarkupStream(FormatStream):
    """A buffer, a cursor and a current-state method: the skeleton of a marker parser.

    Each state method consumes what it can from ``_buf[_pos:]`` and returns ``True``
    to run the (possibly new) state again, ``False`` when it needs more input. The
    buffer is compacted once per feed, so a whole output fed at once is not copied
    per marker. Subclasses set ``_state`` and implement :meth:`_finish`.
    """

    def __init__(self, fmt: Format, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._buf = ""
        self._pos = 0
        self._final = False
        self._state: Callable[[], bool] = self._finished
        self._json = ClosureScanner()
        self._json_after: Callable[[], bool] = self._finished
        self._tail: list[str] = []

    # ---- driving

    def _feed(self, delta: str) -> None:
        self._buf += delta
        self._pump()

    def _close(self) -> None:
        self._final = True
        self._pump()
        self._finish()

    def _pump(self) -> None:
        while self._state():
            pass
        self._buf = self._buf[self._pos :]
        self._pos = 0

    def _finished(self) -> bool:
        return False

    def _arguments(self, text: str, index: int | None = None) -> None:
        # Merge with the previous fragment of the same call, as _text does for text:
        # an object built from many small pieces then costs one event per feed.
        target = self._call_count - 1 if index is None else index
        sink = self._held if self._hold_args else self._out
        last = sink[-1] if sink else None
        if text and isinstance(last, ToolCallDelta) and last.index == target:
            last.arguments += text
        else:
            super()._arguments(text, index)

    def _markup_begins(self, marker: str) -> None:
        """A call (or call section) begins with ``marker``, just consumed."""
        # A call inside an open section keeps the section's anchor.
        self._call_begins_in(self._buf, self._pos - len(marker))

    def _markup_ends(self) -> None:
        """The open call's markup is complete at the cursor."""
        self._call_ends(self._at(self._buf, self._pos))

    @abstractmethod
    def _finish(self) -> None:
        """At end of output: raise FormatError unless the parser is at rest."""

    # ---- reading primitives

    def _until(self, markers: MarkerSet) -> tuple[str, str | None]:
        """Consume up to (and including) the earliest marker.

        Returns:
            ``(text before it, marker)``; or, when no marker is in the buffer, the text
            that cannot start one (everything, at end of output) and ``None``.
        """
        buf, pos = self._buf, self._pos
        found = markers.pattern.search(buf, pos)
        if found is not None:
            at, self._pos = found.span()
            return buf[pos:at], found.group()
        end = len(self._buf)
        if not self._final:
            end -= markers.holdback(self._buf, self._pos)
        chunk = self._buf[self._pos : end]
        self._pos = end
        return chunk, None

    def _peek(self, literal: str) -> bool | None:
        """Consume ``literal`` if the buffer starts with it.

        Returns:
            ``True`` (consumed), ``False`` (it is not there) or ``None`` (the buffer is
            a proper prefix of it: wait for more input).
        """
        if self._buf.startswith(literal, self._pos):
            self._pos += len(literal)
            return True
        # Slice at most len(literal) characters: the buffer may hold the whole output.
        rest = self._buf[self._pos : self._pos + len(literal)]
        if not self._final and len(rest) < len(literal) and literal.startswith(rest):
            return None
        return False

    def _continues(self, at: int, choices: Sequence[str]) -> bool | None:
        """Whether the grammar goes on at ``at`` (see :func:`.markers.continues`)."""
        return continues(self._buf, at, choices, final=self._final, at_end=True)

    def _skip_space(self) -> bool:
        """Skip whitespace; return whether a non-space character follows."""
        buf, pos = self._buf, self._pos
        if pos < len(buf) and not buf[pos].isspace():  # most markers follow one another
            return True
        match = _SPACE.match(buf, pos)  # (\s is what str.isspace() tells)
        self._pos = match.end() if match else pos
        return self._pos < len(buf)

    def _expect(self, choices: Sequence[str], what: str) -> str | None:
        """After optional whitespace, consume one of ``choices``.

        Returns:
            The literal consumed, or ``None`` when more input is needed.

        Raises:
            FormatError: Something else is there.
        """
        # The whitespace skipped here is layout, so it is consumed even while waiting:
        # a long run fed one character at a time is then scanned once.
        if not self._skip_space():
            return None
        return self._choose(choices, what)

    def _choose(self, choices: Sequence[str], what: str) -> str | None:
        """Consume one of ``choices`` right at the cursor (see :meth:`_expect`)."""
        # What _peek does per literal, without a call per literal (a state that waits
        # for its next marker runs this once per delta).
        buf, pos = self._buf, self._pos
        for literal in choices:
            if buf.startswith(literal, pos):
                self._pos = pos + len(literal)
                return literal
        if not self._final:
            left = len(buf) - pos
            for literal in choices:
                # The buffer ends inside what could still grow into this literal.
                if left < len(literal) and literal.startswith(buf[pos:]):
                    return None
        found = self._buf[self._pos : self._pos + 40]
        raise self._error(f"expected {what}, found {found!r}", self._where())

    def _where(self) -> str:
        return f"tool call {self.call_count - 1}" if self.call_count else "tool-call section"

    # ---- JSON arguments (V3 / V3.1 / Kimi): streamed as scanned, marker-safe

    def _start_json_arguments(self, after: Callable[[], bool]) -> None:
        self._json = ClosureScanner()
        self._json_after = after
        self._tail = []
        self._state = self._st_json_arguments

    def _st_json_arguments(self) -> bool:
        scanner = self._json
        if not scanner.started:
            if not self._skip_space():
                return False
            if self._buf[self._pos] != "{":
                raise self._error("the arguments must be a JSON object", self._where())
        end = scanner.feed(self._buf, self._pos)
        stop = len(self._buf) if end < 0 else end
        self._arguments(self._buf[self._pos : stop])
        self._pos = stop
        if end < 0:
            return False
        self._state = self._json_after
        return True

    def _read_tail(self, markers: MarkerSet, closer: str, allowed: Sequence[str]) -> bool | None:
        """Read what follows a call's JSON up to ``closer``.

        Returns:
            ``None`` while waiting, ``True`` once ``closer`` was consumed.

        Raises:
            FormatError: Another marker came first, or the text in between is not one
                of ``allowed`` (after stripping whitespace).
        """
        chunk, marker = self._until(markers)
        if marker is None:
            self._tail.append(chunk)
            return None
        if self._tail:
            chunk = "".join(self._tail) + chunk
            self._tail = []
        tail = chunk.strip()
        if marker != closer or tail not in allowed:
            raise self._error(f"unexpected {tail or marker!r} after the arguments", self._where())
        return True


class ThinkStream(MarkupStream):
    """A :class:`MarkupStream` whose output may open with ``<think>…</think>``.

    Leading whitespace is held until it is clear whether ``<think>`` follows (GLM-4.5
    writes ``\\n<think>``); inside reasoning only ``</think>`` is a marker.
    """

    think_open: ClassVar[str] = THINK_OPEN
    think_close: ClassVar[str] = THINK_CLOSE
    # A separator the template writes right after </think>, dropped once (GLM: "\n").
    after_think: ClassVar[str] = ""

    def __init__(self, fmt: Format, *, id_prefix: str | None, reasoning_open: bool) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._think_end = marker_set(self.think_close)
        self._state = self._st_reasoning if reasoning_open else self._st_start

    @abstractmethod
    def _st_content(self) -> bool:
        """The state outside reasoning and calls."""

    def _st_start(self) -> bool:
        mark = self._pos
        self._skip_space()
        opened = self._peek(self.think_open)
        if opened is None:
            self._pos = mark
            return False
        if opened:
            self._state = self._st_reasoning
            return True
        self._pos = mark
        self._state = self._st_content
        return True

    def _st_reasoning(self) -> bool:
        chunk, marker = self._until(self._think_end)
        self._reasoning(chunk)
        if marker is None:
            return False
        self._state = self._st_after_think
        return True

    def _st_after_think(self) -> bool:
        if self.after_think and self._peek(self.after_think) is None:
            return False
        self._state = self._st_content
        return True

    def _at_rest(self) -> bool:
        return self._state in (
            self._st_start,
            self._st_reasoning,
            self._st_after_think,
            self._st_content,
        )


class ArgumentWriter:
    """Builds one call's arguments JSON object from key/value pieces as they arrive.

    ``emit`` receives the JSON text incrementally: ``{"city": "Bei`` … ``jing"}``. A
    value is streamed as a JSON string when it is text; typed values (a JSON tag, or a
    schema that allows more than a string) are buffered until they close, then
    converted, since their type is only known from the whole text.
    """

    __slots__ = ("_emit", "_keys", "_mode", "_pieces", "_schema")

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._keys: set[str] = set()
        self._mode = ""
        self._pieces: list[str] = []
        self._schema: Mapping[str, Any] | None = None

    @property
    def empty(self) -> bool:
        """Whether no key was written yet."""
        return not self._keys

    def key(self, name: str) -> bool:
        """Start the member ``name``; return ``False`` if it was already written."""
        if name in self._keys:
            return False
        self._emit(("{" if not self._keys else ", ") + json_string(name) + ": ")
        self._keys.add(name)
        return True

    def begin_text(self) -> None:
        """The value is raw text: stream it as a JSON string."""
        self._mode = "text"
        self._emit('"')

    def begin_json(self) -> None:
        """The value is JSON text (buffered, validated when it closes)."""
        self._mode = "json"
        self._pieces = []

    def begin_typed(self, schema: Mapping[str, Any] | None) -> None:
        """The value is text typed by ``schema`` (see :func:`base.coerce_value`)."""
        types = schema_types(schema)
        if not types or types == {"string"}:
            self.begin_text()
            return
        self._mode = "typed"
        self._schema = schema
        self._pieces = []

    def piece(self, text: str) -> None:
        """More of the current value."""
        if not text:
            return
        if self._mode == "text":
            self._emit(json_string(text)[1:-1])
        else:
            self._pieces.append(text)

    def end_value(self) -> str | None:
        """Close the current value; return an error message if it is invalid."""
        mode, self._mode = self._mode, ""
        if mode == "text":
            self._emit('"')
            return None
        text = "".join(self._pieces)
        self._pieces = []
        if mode == "typed":
            self._emit(value_to_json(text, self._schema))
            return None
        return self._emit_json(text)

    def _emit_json(self, text: str) -> str | None:
        try:
            json.loads(text, parse_constant=reject_json_constant)
        except (ValueError, RecursionError):
            return f"value {text[:40]!r} is not valid JSON"
        self._emit(text.strip())
        return None

    def close(self) -> None:
        """Close the object (``{}`` when it has no member)."""
        self._emit("}" if self._keys else "{}")
