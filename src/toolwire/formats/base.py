"""The base of every text-marker tool-call format: :class:`Format` and :class:`FormatStream`.

Open-weight models write tool calls as text with special markers. Each family module
(``hermes``, ``llama``, ``mistral``, ...) subclasses :class:`Format` and
:class:`FormatStream`; the shared pieces live in their own modules (markers, the JSON
call-object reader, schema coercion, ids, results, separator trimming), imported
from there.

* **One code path.** :meth:`Format.parse` runs the family's own stream over the whole
  text and collects its events, so the non-streaming and the streaming result can
  never disagree.
* **Events** are the wire vocabulary of :mod:`toolwire.wire.events` (``TextDelta``,
  ``ReasoningDelta``, ``ToolCallStarted``, ``ToolCallDelta``, ``ToolCallRetracted``,
  ``Notice``); a call's ``index`` is its ordinal in the output, and the concatenation
  of its ``ToolCallDelta`` texts is its arguments JSON.
* **Malformed markup is data.** The family parser says where a call's markup begins
  (:meth:`FormatStream._call_begins`) and where it is complete
  (:meth:`FormatStream._call_ends`). When the parser raises :class:`FormatError` (a
  call cut off or malformed), the stream retracts the calls it announced since the
  call began (``ToolCallRetracted``), emits a ``Notice`` saying what and where, and
  passes the raw text from the call's first marker to the end of the output through
  as content. A call cut off by the end of the output (``truncated_call``) is dropped
  the same way, but its text is not content: half a call is neither a call nor an
  answer, and its markup would leak. ``strict=True`` raises instead. Calls completed
  before stay.
* **Held calls.** With ``hold_calls=True`` a call's events are kept until the call is
  complete and never emitted for one that is not, so nothing is ever retracted.
* **Separator whitespace** is trimmed at marker boundaries (:mod:`.trim`).

Where a family module says a case "raises :class:`FormatError`", that is what its
parser reports; the stream turns it into content with a notice unless ``strict``.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ..errors import CallerError, DecoderStateError, FormatError
from ..tooldef import ToolDef
from ..turn import Notice, NoticeKind
from ..wire.events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallRetracted,
    ToolCallStarted,
)
from .coerce import ToolIndex
from .ids import IdFactory
from .registry import family_info
from .results import MALFORMED, REPAIRED, TRUNCATED, EventCollector, ParseResult
from .trim import SeparatorTrim

_SPACE = " \t\r\n"

__all__ = ["Format", "FormatStream", "state_steps"]


_STEPS: dict[type, dict[str, Callable[..., Any]]] = {}


def state_steps(cls: type) -> dict[str, Callable[..., Any]]:
    """The ``_on_<state>`` handlers of a state-machine class, by state name.

    Readers that dispatch on a state name call ``steps[state](self, ...)``: one dict
    lookup per step instead of formatting the method's name and looking it up.
    """
    steps = _STEPS.get(cls)
    if steps is None:
        steps = _STEPS[cls] = {n[4:]: getattr(cls, n) for n in dir(cls) if n.startswith("_on_")}
    return steps


class FormatStream(ABC):
    """An incremental parser of one model output.

    Subclasses implement :meth:`_feed` and :meth:`_close` and report what they find
    through :meth:`_text`, :meth:`_reasoning`, :meth:`_begin_call` and
    :meth:`_arguments`, and mark each call's markup with :meth:`_call_begins` /
    :meth:`_call_ends` (positions given as :meth:`_at`; :meth:`_call_begins_in` takes a
    buffer index); the public :meth:`feed` / :meth:`close` wrap them with the misuse
    checks, the malformed-call fallback, held calls and separator trimming. Each helper
    routes its event where the family cuts the text: trimmed, then published in this
    feed's list or held while a call's markup is open, so nothing is routed twice.

    Attributes:
        strict: Raise :class:`FormatError` instead of passing a broken call through.
        hold_calls: Emit a call only once it is complete.
    """

    # Slots for the wrapper's own state: a family's parser adds a dozen attributes of
    # its own, and an instance dict past 30 keys stops sharing its keys, which makes
    # every attribute read in the per-character hot paths a dict lookup.
    __slots__ = (
        "__dict__",
        "_anchor",
        "_call_count",
        "_closed",
        "_committed_at",
        "_counted",
        "_fast_text",
        "_fed",
        "_held",
        "_hold_args",
        "_ids",
        "_kept",
        "_out",
        "_passthrough",
        "_pending",
        "_raw",
        "_raw_origin",
        "_special",
        "_trim_content",
        "_trim_reasoning",
        "format",
        "hold_calls",
        "strict",
    )

    def __init__(self, fmt: Format, *, id_prefix: str | None = None) -> None:
        self.format = fmt
        self.strict = False
        self.hold_calls = False
        self._ids = fmt.id_factory(id_prefix)
        self._out: list[Event] = []  # what the current feed/close returns
        self._call_count = 0
        self._closed = False
        self._fed = 0  # characters in the first _counted deltas of _raw
        self._counted = 0
        self._special = False  # closed, or passing a broken call's text through
        # The text channel whose next piece may be published as it is (no call open,
        # that channel running with no whitespace held, the other one at a boundary),
        # when it ends in a non-space: most text streamed a character at a time.
        self._fast_text: type[TextDelta] | type[ReasoningDelta] | None = None
        # The deltas since the last complete call, for the text of a broken call.
        self._raw: list[str] = []
        self._raw_origin = 0  # the output offset of _raw[0]
        self._anchor: int | None = None  # where the open call's markup began
        self._committed_at = 0  # where the last complete call's markup ended
        self._pending: list[int] = []  # calls announced since the anchor
        # Of a unit of several calls (a list): how many of _pending and _held belong to
        # calls already whole, which a cut-off output keeps (``_call_complete``).
        self._kept = (0, 0)
        self._held: list[Event] = []  # events kept until the open call completes
        self._hold_args = False  # a call is open and held: its events go to _held
        self._passthrough = False  # after a broken call: the rest is content
        self._trim_content = SeparatorTrim()
        self._trim_reasoning = SeparatorTrim()

    # ---- public API

    def feed(self, delta: str) -> list[Event]:
        """Parse the next piece of output.

        Returns:
            The events this piece completes (content not possibly a marker's
            beginning, reasoning, call starts, argument fragments, and for a call that
            turned out broken its ``ToolCallRetracted``, a ``Notice`` and its text).

        Raises:
            FormatError: Only with ``strict``: the output holds a malformed tool call.
            DecoderStateError: The stream was already closed.
        """
        if self._special or delta.__class__ is not str:  # one test on the common path
            if self._closed:
                raise DecoderStateError(f"{self.format.family} stream fed after close()")
            if self._special:
                return self._pass_through(delta)
            if not isinstance(delta, str):
                raise CallerError(f"feed() takes str, got {type(delta).__name__}")
        # ``self._raw.append`` spelled out: CPython specialises a list's own append
        # call (a bound method kept in an attribute goes through the generic call,
        # ~200 instructions more per delta).
        self._raw.append(delta)
        out: list[Event] = []
        self._out = out
        try:
            self._feed(delta)
        except FormatError as error:
            return self._failed(error, MALFORMED)
        return out

    def _pass_through(self, delta: str) -> list[Event]:
        """After a broken call: the rest of the output is content."""
        if not isinstance(delta, str):
            raise CallerError(f"feed() takes str, got {type(delta).__name__}")
        self._raw.append(delta)
        out: list[Event] = []
        self._out = out
        self._text(delta)
        return out

    def close(self) -> list[Event]:
        """End the output: flush held-back text and settle a call left open.

        A call the output ended inside is dropped with a ``truncated_call`` notice:
        its text is not content (``strict``: :class:`FormatError`).

        Raises:
            FormatError: Only with ``strict``: the output ended inside a tool call, or
                with a malformed one.
            DecoderStateError: The stream was already closed.
        """
        if self._closed:
            raise DecoderStateError(f"{self.format.family} stream closed twice")
        self._closed = self._special = True
        out: list[Event] = []
        self._out = out
        if self._passthrough:
            return out
        try:
            self._close()
        except FormatError as error:
            return self._failed(error, TRUNCATED)
        if self._anchor is not None:  # the family left the last call open, but whole
            self._settle()
        return out

    @property
    def call_count(self) -> int:
        """How many calls have started so far (retracted ones included)."""
        return self._call_count

    # ---- for subclasses

    @abstractmethod
    def _feed(self, delta: str) -> None:
        """Consume ``delta``, reporting through the ``_text``/... helpers."""

    @abstractmethod
    def _close(self) -> None:
        """Flush at end of output; raise :class:`FormatError` if a call is open."""

    def _at(self, buffer: str, index: int) -> int:
        """The output offset of ``buffer[index]``, for a buffer that ends at the input
        fed so far (every family keeps its unread text that way)."""
        raw = self._raw
        counted = self._counted
        if counted < len(raw):  # counted lazily: feed() only appends
            if counted + 1 == len(raw):  # usually one delta since the last marker
                self._fed += len(raw[counted])
            else:
                # One join counts a run of small deltas at a third of the cost of
                # summing their lengths one by one.
                self._fed += len("".join(raw[counted:]))
            self._counted = len(raw)
        return self._fed - len(buffer) + index

    def _call_begins(self, at: int) -> None:
        """A call's markup (or a call section) begins at output offset ``at``.

        If the call turns out broken, the text from ``at`` on becomes content. A second
        call while one is open keeps the first anchor.
        """
        if self._anchor is None:
            self._anchor = at
            self._kept = (0, 0)
            self._hold_args = self.hold_calls
            # A marker: both text channels start a new piece.
            self._trim_content.at_boundary = self._trim_reasoning.at_boundary = True
            self._fast_text = None

    def _call_begins_in(self, buffer: str, index: int) -> None:
        """:meth:`_call_begins` at ``buffer[index]`` (the offset as :meth:`_at` gives it,
        computed only for the first call of a section, without a call in between)."""
        if self._anchor is None:
            self._anchor = self._at(buffer, index)
            self._kept = (0, 0)
            self._hold_args = self.hold_calls
            self._trim_content.at_boundary = self._trim_reasoning.at_boundary = True
            self._fast_text = None

    def _call_ends(self, at: int) -> None:
        """The open call's markup is complete up to output offset ``at``."""
        self._trim_content.at_boundary = self._trim_reasoning.at_boundary = True
        self._fast_text = None
        if self._anchor is not None:
            self._anchor = None
            self._hold_args = False
            if self._pending:
                self._pending = []
            if self._held:  # release what was kept for the call
                self._release()
        self._committed_at = at
        raw = self._raw
        if len(raw) > 1 and self._counted == len(raw):
            # Text before a complete call's end is never given back: drop the deltas
            # wholly before it (a long stream keeps no more than its open call's text,
            # and the allocator reuses what the dropped deltas held).
            origin = self._fed - len(raw[-1])
            if origin <= at:
                del raw[:-1]
                self._counted = 1
                self._raw_origin = origin

    def _call_complete(self) -> None:
        """The latest call is whole, but the unit it is in (a list of calls) is not.

        Malformed markup later in the unit still makes the whole unit content; an
        output cut off later in it keeps this call and those before it.
        """
        if self._anchor is not None:
            self._kept = (len(self._pending), len(self._held))

    def _repaired(self, message: str, index: int | None = None) -> None:
        """Flag call ``index`` (default: the latest) as recovered from broken markup."""
        target = self._call_count - 1 if index is None else index
        self._boundary()
        sink = self._held if self._hold_args else self._out
        sink.append(Notice(REPAIRED, f"{self.format.family}: {message}", target))

    # The reporting helpers route their event on the spot: text through its channel's
    # separator trimming (skipped for text that continues a running channel and ends in
    # a non-space, the common case), into this feed's list, or into the held list while
    # a call's markup is open (text always, the call's own events when it is held).

    def _text(self, text: str) -> None:
        if text:
            if self._fast_text is TextDelta and text[-1] not in _SPACE:
                out = self._out
                last = out[-1] if out else None
                if last.__class__ is TextDelta:
                    last.text += text
                else:
                    out.append(TextDelta(text))
                return
            # What _reasoning does for its channel (spelled out twice: a call fewer
            # per piece of text next to a marker).
            trim = self._trim_content
            self._trim_reasoning.at_boundary = True  # its next piece starts anew
            piece = trim.text(text)
            if self._anchor is not None:
                self._fast_text = None
                if piece:
                    self._held.append(TextDelta(piece))
                return
            self._fast_text = None if trim.held or trim.at_boundary else TextDelta
            if piece:
                out = self._out
                last = out[-1] if out else None
                if last.__class__ is TextDelta:
                    last.text += piece
                else:
                    out.append(TextDelta(piece))

    def _reasoning(self, text: str) -> None:
        if text:
            if self._fast_text is ReasoningDelta and text[-1] not in _SPACE:
                out = self._out
                last = out[-1] if out else None
                if last.__class__ is ReasoningDelta:
                    last.text += text
                else:
                    out.append(ReasoningDelta(text))
                return
            trim = self._trim_reasoning
            self._trim_content.at_boundary = True
            piece = trim.text(text)
            if self._anchor is not None:
                self._fast_text = None
                if piece:
                    self._held.append(ReasoningDelta(piece))
                return
            self._fast_text = None if trim.held or trim.at_boundary else ReasoningDelta
            if piece:
                out = self._out
                last = out[-1] if out else None
                if last.__class__ is ReasoningDelta:
                    last.text += piece
                else:
                    out.append(ReasoningDelta(piece))

    def _begin_call(self, name: str, call_id: str | None = None) -> int:
        """Announce a new call; returns its index."""
        # A family must mark where a call's markup begins before announcing the call,
        # or its text could not be given back if the call breaks.
        assert self._anchor is not None, "call announced outside _call_begins"
        index = self._call_count
        self._call_count += 1
        self._trim_content.at_boundary = self._trim_reasoning.at_boundary = True
        self._fast_text = None
        event = ToolCallStarted(index, call_id or self._ids.make(index), name)
        if self._hold_args:
            self._held.append(event)
        else:
            self._out.append(event)
            self._pending.append(index)  # announced now: retracted if the call breaks
        return index

    def _arguments(self, text: str, index: int | None = None) -> None:
        """Emit an argument fragment of call ``index`` (default: the latest call)."""
        if text:
            event = ToolCallDelta(self._call_count - 1 if index is None else index, text)
            (self._held if self._hold_args else self._out).append(event)

    def _error(self, message: str, where: str = "") -> FormatError:
        return FormatError(message, family=self.format.family, where=where)

    # ---- routing: held events, broken calls

    def _forget_events(self) -> None:
        """Forget what was reported so far, as if the output started here (a family
        that primes its parser with the generation prompt calls this after it)."""
        self._out = []
        self._held = []
        self._pending = []
        self._call_count = 0
        self._fast_text = None
        self._trim_content = SeparatorTrim()
        self._trim_reasoning = SeparatorTrim()

    def _boundary(self) -> None:
        """A marker: both text channels start a new piece."""
        # (A channel already at a boundary keeps the whitespace it collected since.)
        self._trim_content.at_boundary = self._trim_reasoning.at_boundary = True
        self._fast_text = None

    def _route(self, event: Event) -> None:
        """Trim, publish or hold one event, as the reporting helpers do."""
        if isinstance(event, TextDelta):
            self._text(event.text)
        elif isinstance(event, ReasoningDelta):
            self._reasoning(event.text)
        else:
            self._boundary()
            (self._held if self._hold_args else self._out).append(event)

    def _publish(self, event: Event) -> None:
        """Append ``event`` to this feed's list, joining text to text of its kind."""
        out = self._out
        last = out[-1] if out else None
        if last is not None and last.__class__ is event.__class__:
            if isinstance(last, TextDelta) and isinstance(event, TextDelta):
                last.text += event.text
                return
            if isinstance(last, ReasoningDelta) and isinstance(event, ReasoningDelta):
                last.text += event.text
                return
        out.append(event)

    def _release(self) -> None:
        """Publish what was held for the call that just completed."""
        held = self._held
        self._held = []
        for event in held:
            self._publish(event)

    def _settle(self) -> None:
        """The open call is complete: release what was held for it."""
        self._anchor = None
        self._hold_args = False
        self._pending = []
        self._release()

    def _failed(self, error: FormatError, kind: NoticeKind) -> list[Event]:
        if self.strict:
            self._closed = self._special = True
            error.events = self._out
            raise error
        self._fall_back(error, kind)
        return self._out

    def _fall_back(self, error: FormatError, kind: NoticeKind) -> None:
        """A call turned out broken: retract it and pass its text through as content."""
        start = max(self._anchor if self._anchor is not None else self._committed_at, 0)
        assert start >= self._raw_origin, "a broken call's text began before the last call"
        reason = _stable_reason(error, kind)
        out = self._out
        pending, kept = self._pending, self._held[:0]
        if kind == TRUNCATED and self._anchor is not None:
            # The calls of the unit already whole stay (with the text between them).
            calls, events = self._kept
            pending, kept = pending[calls:], self._held[:events]
        for index in pending:
            out.append(ToolCallRetracted(index, reason))
        for event in kept:
            self._publish(event)
        self._anchor = None
        self._hold_args = False
        self._pending = []
        self._held = []
        self._passthrough = self._special = True
        where = f" ({error.where})" if error.where else ""
        # Cut off by the end of the output, what was written of the call is not a call,
        # and not an answer either (its markup would leak into content).
        fate = "dropped, neither a call nor content" if kind == TRUNCATED else "content, not a call"
        message = (
            f"{self.format.family}: {reason}{where}; the text from offset {start} on is {fate}"
        )
        self._route(Notice(kind, message))
        if kind != TRUNCATED:
            self._text("".join(self._raw)[start - self._raw_origin :])


# What a family's message quotes from its buffer depends on how the input was split;
# a notice must not (the stream and the whole parse give the same result).
# So what it quotes is elided (the offset in the notice says where to look).
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def _stable_reason(error: FormatError, kind: str) -> str:
    reason = _QUOTED.sub("…", error.reason).strip()
    if kind == TRUNCATED:
        return reason or "the output ended inside a tool call"
    return reason or "malformed tool call"


class Format(ABC):
    """A model family's tool-call format, configured for one variant and tool set.

    Attributes:
        family: The family name (registry key), for example ``"hermes"``.
        variant: The variant within the family, for example ``"qwen3"``.
        tools: The tool index used to type argument values.
        generation_prompt: The text the chat template appended after the last message,
            as the caller gave it (``None``: not given).
        prompt: The generation prompt the output follows: the caller's, else the
            variant's default from the registry (``None`` when the variant needs none).
        markers: The marker strings of this format (tests check none leaks out).
        id_factory: The :class:`IdFactory` class that makes the ids of calls the
            output does not name; a family whose template constrains ids overrides it.
    """

    family: ClassVar[str] = ""
    markers: tuple[str, ...] = ()
    id_factory: ClassVar[type[IdFactory]] = IdFactory

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any] | ToolDef] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        if generation_prompt is not None and not isinstance(generation_prompt, str):
            raise CallerError("generation_prompt must be a str or None")
        info = family_info(self.family)
        info.check_variant(variant)
        self.variant = variant
        self.tools = ToolIndex(tools)
        self.generation_prompt = generation_prompt
        self.prompt = (
            info.default_prompt(variant) if generation_prompt is None else generation_prompt
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.family}/{self.variant}>"

    def stream(
        self, *, id_prefix: str | None = None, strict: bool = False, hold_calls: bool = False
    ) -> FormatStream:
        """Start an incremental parse of one output.

        Args:
            id_prefix: Prefix of generated call ids (``<prefix><index>``); a random
                one per stream when ``None``.
            strict: Raise :class:`FormatError` on a malformed or cut-off call instead
                of passing its text through as content with a notice.
            hold_calls: Emit each call only once it is complete (all its events at
                once), so no call is ever retracted: for consumers that re-serve
                deltas and cannot take a call back, such as an OpenAI-compatible
                proxy. Content and reasoning still stream.
        """
        stream = self._open_stream(id_prefix)
        stream.strict = bool(strict)
        stream.hold_calls = bool(hold_calls)
        # A call a generation prompt left open (Harmony primes with it) is held too.
        stream._hold_args = stream.hold_calls and stream._anchor is not None
        return stream

    @abstractmethod
    def _open_stream(self, id_prefix: str | None) -> FormatStream:
        """Return a fresh stream of this format (the family's parser)."""

    def parse(
        self, text: str, *, id_prefix: str | None = None, strict: bool = False
    ) -> ParseResult:
        """Parse a whole output (the same code path as streaming, in one piece).

        A malformed or cut-off call is data: its text is passed through as content
        and a notice in :attr:`ParseResult.notices` says what was wrong and where.

        Args:
            text: The whole output.
            id_prefix: Prefix of generated call ids.
            strict: Raise instead (the pre-notice behaviour).

        Raises:
            FormatError: Only with ``strict=True``: a malformed or truncated call;
                ``partial`` holds what was parsed before it.
        """
        if not isinstance(text, str):
            raise CallerError(f"parse() takes str, got {type(text).__name__}")
        stream = self.stream(id_prefix=id_prefix, strict=strict)
        collector = EventCollector()
        try:
            collector.add(stream.feed(text))
            collector.add(stream.close())
        except FormatError as error:
            collector.add(error.events)
            error.partial = collector.result()
            raise
        return collector.result()
