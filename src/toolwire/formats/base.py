"""The base of every text-marker tool-call format: :class:`Format` and :class:`FormatStream`.

Open-weight models write tool calls as text with special markers. Each family module
(``hermes``, ``llama``, ``mistral``, ...) subclasses :class:`Format` and
:class:`FormatStream`; the shared pieces live in their own modules (markers, the JSON
call-object reader, schema coercion, ids, results, separator trimming) and are
re-exported here under the names they always had.

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
  as content. ``strict=True`` raises instead. Calls completed before stay.
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

from ..errors import CallerError, DecoderStateError
from ..turn import Notice
from ..wire.events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallRetracted,
    ToolCallStarted,
)
from .callobject import CallObjectReader
from .coerce import ToolIndex, coerce_value, schema_types, value_to_json
from .ids import AlphanumericIds, IdFactory
from .markers import MarkerSet, opens_reasoning, skip_whitespace
from .results import (
    MALFORMED,
    REPAIRED,
    TRUNCATED,
    EventCollector,
    FormatError,
    ParsedCall,
    ParseResult,
    collect_events,
    to_openai_delta,
)
from .trim import SeparatorTrim

_SPACE = " \t\r\n"

__all__ = [
    "MALFORMED",
    "REPAIRED",
    "TRUNCATED",
    "AlphanumericIds",
    "CallObjectReader",
    "EventCollector",
    "Format",
    "FormatError",
    "FormatStream",
    "IdFactory",
    "MarkerSet",
    "ParseResult",
    "ParsedCall",
    "ToolIndex",
    "coerce_value",
    "collect_events",
    "opens_reasoning",
    "schema_types",
    "skip_whitespace",
    "to_openai_delta",
    "value_to_json",
]


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
    checks, the malformed-call fallback, held calls and separator trimming. What the
    helpers report is routed (trimmed, published, held) once, at the end of the feed;
    a call's begin and end are marks between its events.

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
        "_fast_calls",
        "_fast_text",
        "_fed",
        "_held",
        "_ids",
        "_out",
        "_passthrough",
        "_pending",
        "_public",
        "_raw",
        "_raw_origin",
        "_routed_anchor",
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
        # What the family parser reported, not yet routed: its events, and the marks
        # _CALL_BEGINS / _CALL_ENDS where a call's markup begins and ends between them.
        self._out: list[Any] = []
        # What the current feed/close returns; None until routing needs a list of its
        # own (a delta whose one event passes unchanged returns the family's list).
        self._public: list[Event] | None = None
        self._call_count = 0
        self._closed = False
        self._fed = 0  # characters in the first _counted deltas of _raw
        self._counted = 0
        self._special = False  # closed, or passing a broken call's text through
        # Set by _take_public: single events feed() may return as they are.
        self._fast_text: type[TextDelta] | type[ReasoningDelta] | None = None
        self._fast_calls = True
        # The deltas since the last complete call, for the text of a broken call.
        self._raw: list[str] = []
        self._raw_origin = 0  # the output offset of _raw[0]
        self._anchor: int | None = None  # where the open call's markup began
        self._routed_anchor = False  # routing has passed the open call's begin mark
        self._committed_at = 0  # where the last complete call's markup ended
        self._pending: list[int] = []  # calls announced since the anchor
        self._held: list[Event] = []  # events kept until the open call completes
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
        out: list[Any] = []
        self._out = out
        try:
            self._feed(delta)
        except FormatError as error:
            return self._failed(error, MALFORMED)
        if self._public is None:
            # The common delta: every event it reported is one routing would publish
            # as it is (the reporting helpers below decided, as they appended; this
            # path is most of the cost of streaming a character at a time).
            return out
        return self._take_public()

    def _take_public(self) -> list[Event]:
        """Route what is left and hand the events of this feed/close over.

        Then decide which events the reporting helpers may leave for :meth:`feed` to
        return unrouted: text of the channel that is running (no marker since, no
        whitespace held) ending in a non-space; argument fragments unless a call is
        being held.
        """
        if self._out:
            self._route_out()
        public = self._public
        self._public = None  # between calls: routing allocates a fresh list
        assert public is not None
        content, reasoning = self._trim_content, self._trim_reasoning
        fast: type[TextDelta] | type[ReasoningDelta] | None = None
        if self._anchor is None:
            if not content.at_boundary and not content.held and reasoning.at_boundary:
                fast = TextDelta
            elif not reasoning.at_boundary and not reasoning.held and content.at_boundary:
                fast = ReasoningDelta
            self._fast_calls = True
        else:
            self._fast_calls = not self.hold_calls
        self._fast_text = fast
        return public

    def _pass_through(self, delta: str) -> list[Event]:
        """After a broken call: the rest of the output is content."""
        if not isinstance(delta, str):
            raise CallerError(f"feed() takes str, got {type(delta).__name__}")
        self._raw.append(delta)
        self._sink()
        self._route(TextDelta(delta))
        return self._take_public()

    def close(self) -> list[Event]:
        """End the output: flush held-back text and settle a call left open.

        A call the output ended inside is passed through as content with a
        ``truncated_call`` notice (``strict``: :class:`FormatError`).

        Raises:
            FormatError: Only with ``strict``: the output ended inside a tool call, or
                with a malformed one.
            DecoderStateError: The stream was already closed.
        """
        if self._closed:
            raise DecoderStateError(f"{self.format.family} stream closed twice")
        self._closed = self._special = True
        self._out = []
        self._public = []
        if self._passthrough:
            return self._take_public()
        try:
            self._close()
        except FormatError as error:
            return self._failed(error, TRUNCATED)
        self._route_out()
        if self._anchor is not None:  # the family left the last call open, but whole
            self._settle()
        return self._take_public()

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
            # Routing is deferred to the end of the feed: a mark in the event list says
            # where the call began (a whole parse of many small calls routes once).
            if self._public is None:
                self._public = []  # a state change: feed() must not take its fast path
            self._anchor = at
            self._out.append(_CALL_BEGINS)

    def _call_begins_in(self, buffer: str, index: int) -> None:
        """:meth:`_call_begins` at ``buffer[index]`` (the offset as :meth:`_at` gives it,
        computed only for the first call of a section, without a call in between)."""
        if self._anchor is None:
            if self._public is None:
                self._public = []
            self._anchor = self._at(buffer, index)
            self._out.append(_CALL_BEGINS)

    def _call_ends(self, at: int) -> None:
        """The open call's markup is complete up to output offset ``at``."""
        if self._public is None:
            self._public = []
        self._out.append(_CALL_ENDS)  # routing releases what it held for the call there
        if self._anchor is not None:
            self._anchor = None
            if self._pending:
                self._pending = []
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

    def _repaired(self, message: str, index: int | None = None) -> None:
        """Flag call ``index`` (default: the latest) as recovered from broken markup."""
        target = self._call_count - 1 if index is None else index
        self._out.append(Notice(REPAIRED, f"{self.format.family}: {message}", target))
        if self._public is None:
            self._public = []

    # The reporting helpers append the family's events to ``_out`` and decide on the
    # spot whether the feed needs routing: an event routing would pass unchanged (text
    # of the running channel ending in a non-space, an argument fragment of a call not
    # held) leaves ``_public`` None, anything else sets it, and feed() routes then.

    def _text(self, text: str) -> None:
        if text:
            out = self._out
            last = out[-1] if out else None
            if last.__class__ is TextDelta:
                last.text += text
            else:
                out.append(TextDelta(text))
            if self._public is None and (self._fast_text is not TextDelta or text[-1] in " \t\r\n"):
                self._public = []

    def _reasoning(self, text: str) -> None:
        if text:
            out = self._out
            last = out[-1] if out else None
            if last.__class__ is ReasoningDelta:
                last.text += text
            else:
                out.append(ReasoningDelta(text))
            if self._public is None and (
                self._fast_text is not ReasoningDelta or text[-1] in " \t\r\n"
            ):
                self._public = []

    def _begin_call(self, name: str, call_id: str | None = None) -> int:
        """Announce a new call; returns its index."""
        index = self._call_count
        self._call_count += 1
        self._out.append(ToolCallStarted(index, call_id or self._ids.make(index), name))
        if self._public is None:
            self._public = []
        if not self.hold_calls:  # announced now: retracted if the call breaks
            self._pending.append(index)
        return index

    def _arguments(self, text: str, index: int | None = None) -> None:
        """Emit an argument fragment of call ``index`` (default: the latest call)."""
        if text:
            self._out.append(ToolCallDelta(self._call_count - 1 if index is None else index, text))
            if not self._fast_calls and self._public is None:
                self._public = []

    def _error(self, message: str, where: str = "") -> FormatError:
        return FormatError(message, family=self.format.family, where=where)

    # ---- routing: family events → trimmed, held or retracted public events

    def _failed(self, error: FormatError, kind: str) -> list[Event]:
        self._route_out()
        if self.strict:
            self._closed = self._special = True
            error.events = self._take_public()
            raise error
        self._fall_back(error, kind)
        return self._take_public()

    def _route_out(self) -> None:  # noqa: PLR0912, PLR0915 — one loop routes every event of a feed (hot path); the trim, publish and hold rules read together
        """Trim, publish or hold every event the family reported since the last route."""
        public = self._public
        if public is None:
            public = self._public = []
        out = self._out
        if not out:
            return
        self._out = []
        # One loop over the family's events and call marks, with what _route does for
        # each inlined (a whole parse routes every event here).
        anchored = self._routed_anchor
        hold = self.hold_calls
        content, reasoning = self._trim_content, self._trim_reasoning
        for event in out:
            cls = event.__class__
            if cls is ToolCallDelta:  # the most frequent event
                if anchored and hold:
                    self._held.append(event)
                else:
                    public.append(event)
            elif cls is TextDelta or cls is ReasoningDelta:
                same, other = (content, reasoning) if cls is TextDelta else (reasoning, content)
                if not other.at_boundary:
                    other.boundary()
                text = same.text(event.text)
                if not text:
                    continue
                if anchored:
                    event.text = text
                    self._held.append(event)
                elif public and public[-1].__class__ is cls:
                    public[-1].text += text
                else:
                    event.text = text
                    public.append(event)
            else:
                if not content.at_boundary:
                    content.boundary()
                if not reasoning.at_boundary:
                    reasoning.boundary()
                if event is _CALL_BEGINS:
                    anchored = True
                elif event is _CALL_ENDS:
                    if anchored:
                        anchored = False
                        if self._held:
                            held = self._held
                            self._held = []
                            for kept in held:
                                self._publish(kept)
                elif not anchored:
                    # A family must mark where a call's markup begins before announcing
                    # the call, or its text could not be given back if the call breaks.
                    assert cls is not ToolCallStarted, "call announced outside _call_begins"
                    public.append(event)
                elif hold or (cls is not ToolCallStarted and cls is not Notice):
                    self._held.append(event)
                else:
                    public.append(event)
        self._routed_anchor = anchored

    def _route(self, event: Event) -> None:
        """Trim, publish or hold one event outside the family's list (``_public`` is a
        list here, and everything the family reported was routed before)."""
        self._out.append(event)
        self._route_out()

    def _boundary(self) -> None:
        """A marker: both text channels start a new piece."""
        content, reasoning = self._trim_content, self._trim_reasoning
        if not content.at_boundary:
            content.boundary()
        if not reasoning.at_boundary:
            reasoning.boundary()

    def _sink(self) -> list[Event]:
        if self._public is None:
            self._public = []
        return self._public

    def _publish(self, event: Event) -> None:
        public = self._sink()
        last = public[-1] if public else None
        if last is not None and last.__class__ is event.__class__:
            if isinstance(last, TextDelta) and isinstance(event, TextDelta):
                last.text += event.text
                return
            if isinstance(last, ReasoningDelta) and isinstance(event, ReasoningDelta):
                last.text += event.text
                return
        public.append(event)

    def _settle(self) -> None:
        """The open call is complete: release what was held for it."""
        self._anchor = None
        self._routed_anchor = False
        self._pending = []
        held = self._held
        self._held = []
        for event in held:
            self._publish(event)

    def _fall_back(self, error: FormatError, kind: str) -> None:
        """A call turned out broken: retract it and pass its text through as content."""
        self._sink()
        start = max(self._anchor if self._anchor is not None else self._committed_at, 0)
        assert start >= self._raw_origin, "a broken call's text began before the last call"
        raw = "".join(self._raw)[start - self._raw_origin :]
        reason = _stable_reason(error, kind)
        for index in self._pending:
            self._sink().append(ToolCallRetracted(index, reason))
        self._anchor = None
        self._routed_anchor = False
        self._pending = []
        self._held = []
        self._passthrough = self._special = True
        where = f" ({error.where})" if error.where else ""
        message = (
            f"{self.format.family}: {reason}{where}; the text from offset {start} on "
            "is content, not a call"
        )
        self._route(Notice(kind, message))
        self._route(TextDelta(raw))


class _Mark:
    """Where a call's markup begins or ends, between the events of ``_out``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


_CALL_BEGINS = _Mark("call begins")
_CALL_ENDS = _Mark("call ends")


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
        generation_prompt: The text the chat template appended after the last message.
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
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        if generation_prompt is not None and not isinstance(generation_prompt, str):
            raise CallerError("generation_prompt must be a str or None")
        self.variant = variant
        self.tools = ToolIndex(tools)
        self.generation_prompt = generation_prompt

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
