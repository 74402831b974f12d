"""The one assembler: puts every provider's tool-call fragments back together.

Decoders translate provider shapes into calls on this object (or into events passed to
``apply``); it keeps one table ``index -> {id, name, arguments}``: the id is
taken from its first appearance, name and argument fragments are concatenated. At the
end of the turn it applies the assembly rules in index order — a call without an id or a
name, or a repeated id, breaks the turn (``TurnError``); arguments that are not valid
JSON are recorded on that call only.

While the stream runs, each call's arguments go through a ``ClosureScanner``, lazily:
tool arguments are a JSON object, so the fragments are only scanned when one ends in
``}`` and the common fragment costs an append and one substring test. When the
top-level object closes the call is parsed once and a ``ToolCallReady`` event goes out
— before the stream ends. (Arguments that are not an object are never reported ready
while streaming; the turn's end reports them.)

The assembler owns the list its methods append their events to: ``take_events()``
hands out what was produced since the last take and starts a new list, so a caller
cannot lose events or see one twice, whatever it forgets (each stream decoder's
``feed`` returns what it took).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ..errors import ProtocolError, TurnError
from ..messages import (
    AssistantMessage,
    Part,
    ProviderPart,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCall,
    Usage,
)
from ..turn import NoticeKind, ToolRequest, Turn
from .events import (
    NEW_BY_SLOTS,
    OBJECT_NEW,
    Event,
    Finished,
    Notice,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)
from .jsonscan import ClosureScanner

__all__ = ["Assembler", "dump_json", "loads_json", "parse_arguments", "sendable_text"]

# The C scanner behind json.loads, called directly: it skips three Python-level
# wrapper calls, which are most of the cost of parsing a small value (a chunk of a
# stream, the arguments of a small call; bench/bench_assembly.py measures both).
_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
# What a scanner returns, ``(value, end)``, is unpacked through a typed local: the
# compiled build then reads the tuple's two items in C, where unpacking the untyped
# result went through an iterator, one more object per parse (bench/README.md, eighth
# pass).
_Scanned = tuple[Any, int]


# Final: a C static in the compiled build, where the imported name was looked up in
# the module's dict each time a call's history shape was made (messages.py is not
# compiled, so ToolCall is not a native class).
_TOOL_CALL: Final = ToolCall

_UNSET: Any = object()  # "not parsed yet", where None is a value
_SHAPES: Final = frozenset({ToolCall})  # the one type of a whole call's place in the order
# An assembler's ``_wholes`` while no call came whole: shared and never appended to (a
# turn's first whole call makes the turn's list), so that a turn of streamed calls, or
# of none, makes no list for them (one list a turn was ~0.1% of a short turn's count).
_NO_WHOLES: Final[list[ToolRequest]] = []


def _finite_float(text: str) -> float:
    # FloatingPointError: a built-in nothing else raises here, the hooks' signal to
    # the code that called the scanner, which catches it (it never escapes).
    number = float(text)
    if number - number != 0.0:  # NaN for infinity and NaN, 0.0 for the rest
        raise FloatingPointError
    return number


def _no_constant(text: str) -> float:
    raise FloatingPointError  # NaN, Infinity, -Infinity


# Call arguments are parsed by a scanner that stops at a number JSON cannot carry
# (1e999 becomes infinity, NaN and Infinity themselves): the check costs a Python call
# per float in the text, where a walk over every parsed value cost the pure build a
# fifth of a small call's readiness. What it raises is caught where it is used.
_FINITE = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)
_scan_finite = _FINITE.scan_once  # type: ignore[attr-defined]

# What the decoders accept but no provider can be sent back (invariant: whatever enters
# the history encodes for every provider). A lone surrogate (a code point no UTF-8 can
# hold; JSON's "\ud800" escape makes one) is replaced by U+FFFD where it stands in
# text; a number JSON cannot carry (1e999 parses as infinity, NaN and Infinity as
# themselves) or a lone surrogate inside parsed arguments rejects the call, with a
# reason the model gets back. Escapes in patterns, never literal surrogates (mypyc).
_SURROGATE = re.compile("[\\ud800-\\udfff]")

_NOT_A_NUMBER = (
    "a number JSON cannot carry (infinity or NaN, e.g. 1e999); write it as a string or a "
    "finite number"
)
_LONE_SURROGATE = (
    "a string holds a lone surrogate (an unpaired \\ud800-\\udfff escape); send valid Unicode"
)


def _unsendable(value: Any, text: str) -> str | None:
    """Why the parsed ``value`` of ``text`` could not be sent back to a provider, or None.

    A walk over the parsed value when a call closes: a float that is not finite (NaN,
    Infinity, or a number too large for one, 1e999), and, only when ``text`` holds a
    surrogate escape (the one way parsed text gets a lone surrogate), a string or key
    with a lone surrogate. The number wins when both are there. Searching the text
    with regular expressions instead cost about 90 instructions a character on
    arguments with a character outside the BMP (200,000 on a 2 KB call, a tenth of its
    assembly); the walk costs a third of that, compiled. Iterative, so a deep value
    cannot overflow the stack.
    """
    escapes = "\\ud" in text or "\\uD" in text  # JSON has no \\U escape
    surrogate = False
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)  # typed locals below: dict and list operations in C (mypyc)
        if kind is dict:
            members: dict[Any, Any] = item
            if escapes and any(_lone_surrogate(key) for key in members):
                surrogate = True
            stack.extend(members.values())
        elif kind is list:
            items: list[Any] = item
            stack.extend(items)
        elif kind is float:
            number: float = item
            if number - number != 0.0:  # NaN for infinity and NaN, 0.0 for the rest
                return _NOT_A_NUMBER
        elif escapes and kind is str and _lone_surrogate(item):
            surrogate = True
    return _LONE_SURROGATE if surrogate else None


def _lone_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def loads_json(text: str) -> Any:
    """``json.loads(text)``, faster for the common case of text without surrounding space.

    Raises what ``json.loads`` raises (its error text included) for anything else.
    """
    try:
        scanned: _Scanned = _scan_once(text, 0)
        value, end = scanned
        if end == len(text) or text[end:].isspace():
            return value
    except (StopIteration, ValueError, RecursionError):
        pass
    return json.loads(text)


def dump_json(value: Any, name: str) -> str:
    """``value`` as JSON text (a provider sent an object where text was expected).

    Only what a provider can send fails: a non-finite number or an integer over
    Python's digit limit becomes a ``ProtocolError`` naming ``name``.
    """
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"{name} cannot be written as JSON ({exc})") from None


def parse_arguments(name: str, text: str) -> tuple[Any, str | None]:
    """Parse a call's arguments: ``(value, None)``, or ``(None, reason)`` when not JSON,
    or when the value could not be sent back to a provider (see ``_SURROGATE``)."""
    if not text or text.isspace():
        return {}, None
    try:
        try:
            value = _loads_finite(text)
        except FloatingPointError:
            loads_json(text)  # invalid JSON is the reason when the text is invalid too
            return None, f"Invalid JSON arguments for tool {name}: {_NOT_A_NUMBER}"
    except ValueError as exc:
        return None, f"Invalid JSON arguments for tool {name}: {exc}"
    except RecursionError:
        return None, f"Invalid JSON arguments for tool {name}: nested too deeply"
    if "\\ud" not in text and "\\uD" not in text:  # _checked's first test, once per call
        return value, None
    return _checked(name, value, text)


def _loads_finite(text: str) -> Any:
    """``loads_json(text)``, raising ``FloatingPointError`` at a number JSON cannot carry."""
    try:
        scanned: _Scanned = _scan_finite(text, 0)
        value, end = scanned
        if end == len(text) or text[end:].isspace():
            return value
    except (StopIteration, ValueError, RecursionError):
        pass
    json.loads(text)  # json.loads's error for invalid text; else (leading space) parse again
    return _FINITE.decode(text)


def _checked(name: str, value: Any, text: str) -> tuple[Any, str | None]:
    """``(value, None)``, or ``(None, reason)`` when the ``value`` of ``text``, parsed
    by the finite scanner (its numbers are finite), cannot be sent back: only a lone
    surrogate is left to find, and only text with a surrogate escape can hold one."""
    if "\\ud" not in text and "\\uD" not in text:  # JSON has no \\U escape
        return value, None
    reason = _unsendable(value, text)
    if reason is None:
        return value, None
    return None, f"Invalid JSON arguments for tool {name}: {reason}"


def sendable_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (``text`` itself if none)."""
    if text.isascii():
        return text
    try:
        # UTF-8 cannot hold a lone surrogate: encoding finds one in C at a few
        # instructions a character, where a regular-expression search costs 30.
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


class _Call:
    """Assembly state of one tool call.

    Stream decoders append argument fragments to ``parts`` themselves on their hot path
    (see ``Assembler.arguments``), so this is the one place that state lives.
    """

    __slots__ = (
        "call",
        "caller",
        "done",
        "freeform",
        "id",
        "index",
        "name",
        "parts",
        "ready",
        "ready_parts",
        "replaced",
        "request",
        "scanned",
        "scanner",
    )

    def __init__(
        self,
        index: int,
        id: str | None = None,
        name: str = "",
        request: ToolRequest | None = None,
        call: ToolCall | None = None,
    ) -> None:
        """A call opened at ``index``, empty; or, with its ``request`` and ``call``, one
        whose first fragment was all of it, announced ready at once (``start_call``),
        given its state when something needs it (``Assembler._open_wholes``): its state
        is set once here, not set empty and then again."""
        self.index = index
        self.id = id
        self.name = name
        self.request = request
        self.call = call  # the history shape, built once ready
        if request is None:
            self.parts: list[str] = []
            self.scanned = 0  # how many of ``parts`` the scanner has seen
            self.done = False  # the arguments are known to be final
            self.ready = False  # ToolCallReady was emitted
            self.ready_parts = 0  # len(parts) when ToolCallReady was emitted
        else:
            self.parts = [request.raw_arguments]
            self.scanned = self.ready_parts = 1
            self.done = self.ready = True
        self.scanner: ClosureScanner | None = None  # created at the first fragment ending in "}"
        self.replaced = False  # a lone surrogate was replaced in the text announced ready
        self.freeform = False  # a custom tool call: raw input text, never JSON
        self.caller: dict[str, Any] | None = None  # Anthropic's programmatic caller


class _Segment:
    """A run of text or reasoning deltas, kept in the order it appeared."""

    __slots__ = ("citations", "id", "kind", "pieces", "redacted", "signature")

    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind
        self.pieces = [text]
        self.citations: list[dict[str, Any]] | None = None
        self.signature: str | None = None
        self.redacted: str | None = None
        self.id: str | None = None


class Assembler:
    """Builds one ``Turn`` from the events of one model response."""

    def __init__(self, *, deltas: bool = True) -> None:
        """``deltas=False``: no ``ToolCallDelta`` events, and a call whose ``ToolCallStarted``
        would be the last event when its ``ToolCallReady`` goes out (it came whole
        between two ``take_events()``: a decoder takes them at each item) is announced
        by the Ready alone (the calls and the turn are the same)."""
        # The events produced since the last ``take_events()``. Public for reading, and
        # for the flat ``feed``s, which append their one event per fragment here.
        self.events: list[Event] = []
        # Whether each arguments fragment is reported as a ToolCallDelta. Consumers that
        # only want whole calls and the turn turn it off: per fragment, the event and
        # its list are a third of the pure build's cost (bench/README.md). Off, a call
        # whole in one item also comes as its ToolCallReady alone (``_announce``).
        self.deltas = deltas
        # The calls by provider index: the call opened there last (a server that puts
        # parallel calls all on one index opens several there, see ``_split``). Stream
        # decoders append arguments fragments to these directly on their hot path (see
        # ``arguments``) and call ``scan``; one that finds no call at an index goes to
        # ``tool_fragment``. A call that came whole (``start_call``'s straight path) is
        # not here until something needs its state (``_open_wholes``): until then it is
        # its request in ``_wholes`` and its history shape in ``_order``.
        self.calls: dict[int, _Call] = {}
        # The requests of the calls that came whole, not yet in ``calls``: at indexes 0,
        # 1, 2... in turn (``_whole`` of them). Every method that reads ``calls`` for a
        # call it may hold opens them first; ``arguments`` and the flat feeds need not,
        # as they hand a fragment for an index without a call to ``tool_fragment``.
        self._wholes = _NO_WHOLES
        # A call's own ``index`` (events, ToolRequest.index, the log) is its provider
        # index unless another call has it already; then it is the next free one.
        # Until that first happens, the two are the same for every call, so nothing
        # more is kept (every call is also in ``_order``): the common turn pays nothing.
        self._remapped = False  # some call's index differs from its provider index
        # How many calls came whole in their first fragment (``start_call``'s straight
        # path), at indexes 0, 1, 2... in turn, while every call so far did: then it is
        # also the number of calls (``_wholes``), and the index the next whole call
        # takes. -1 once any call was opened another way (``_open`` and ``start_call``'s
        # other path say so) or the whole calls were given their state
        # (``_open_wholes``, before any change to one). While it is above 0, ``close``
        # takes each call as announced without visiting it; at 0 there is no call.
        self._whole = 0
        self._repeats: set[tuple[str, int]] | None = None  # (notice kind, index) said once
        # The turn's parts as they came: a whole call not yet opened (``_wholes``) holds
        # its place by its history shape, a ``ToolCall``.
        self._order: list[_Segment | _Call | ProviderPart | ToolCall] = []
        self._finish: str | None = None
        self._usage: Usage | None = None  # built when reported, or at the end
        # The last report made of counts (``report_counts``): its Usage is built when
        # read, and the turn's usage is that one (one Usage a turn, not one a report).
        self._counted: UsageReported | None = None
        self._notices: list[Notice] = []
        self._break = False  # the next text or reasoning starts a new part
        self._refused = False  # the provider said the model refused (no refusal text needed)
        self._logprobs: dict[str, list[Any]] | None = None  # kept only when a decoder asks

    def take_events(self) -> list[Event]:
        """The events produced since the last call, in order; the assembler starts a new list.

        Every method that produces events appends them to the assembler's own list, so
        nothing has to be set up before a call, and nothing is lost or handed out twice.
        """
        events = self.events
        self.events = []
        return events

    # -- text and reasoning ----------------------------------------------------------

    def text(self, text: str) -> None:
        """Add answer text."""
        if text.__class__ is not str:
            _wrong("text", text)
        if not text.isascii():
            text = self._sendable(text, None)
        self._segment("text", text)
        self.events.append(TextDelta(text))

    def reasoning(self, text: str) -> None:
        """Add reasoning text."""
        if text.__class__ is not str:
            _wrong("reasoning text", text)
        if not text.isascii():
            text = self._sendable(text, None)
        self._segment("reasoning", text)
        self.events.append(ReasoningDelta(text))

    def refusal(self, text: str, id: str | None = None) -> None:
        """Add refusal text: a part of its own (``RefusalPart``), and the turn is refused.

        ``id`` is the provider's message id the refusal belongs to (Responses), if any.
        """
        if text.__class__ is not str:
            _wrong("refusal text", text)
        if id is not None and id.__class__ is not str:
            _wrong("refusal message id", id)
        if not text.isascii():
            text = self._sendable(text, None)
        self._segment("refusal", text)
        if id is not None:
            last = self._order[-1]
            assert isinstance(last, _Segment)
            last.id = id
        self._refused = True
        self.events.append(RefusalDelta(text))

    def mark_refused(self) -> None:
        """The provider said the model refused (Anthropic's ``stop_reason: "refusal"``)."""
        self._refused = True

    def logprobs(self, key: str, entries: list[Any]) -> None:
        """Keep token log probabilities (``key``: ``content`` or ``refusal``), verbatim.

        Only decoders asked to keep them (``keep_logprobs=True``) call this.
        """
        if entries.__class__ is not list:
            _wrong(f"logprobs.{key}", entries, "an array")
        if self._logprobs is None:
            self._logprobs = {}
        kept = self._logprobs.get(key)
        if kept is None:
            self._logprobs[key] = list(entries)
        else:
            kept.extend(entries)

    def tool_caller(self, index: int, caller: dict[str, Any]) -> None:
        """Attach Anthropic's ``caller`` object (a programmatic call) to the call at ``index``."""
        if caller.__class__ is not dict:
            _wrong("tool call caller", caller, "an object")
        if self._wholes:
            self._open_wholes()
        call = self.calls.get(index)
        if call is None:
            raise ProtocolError(
                "a caller arrived for a tool call that never started", where=f"index {index}"
            )
        self._whole = -1  # the call's history shape changes: close visits each call
        call.caller = caller
        call.call = None  # rebuilt with its caller

    def reasoning_meta(
        self, *, signature: str | None = None, redacted: str | None = None, id: str | None = None
    ) -> None:
        """Attach provider data (signature, encrypted content, item id) to the last reasoning part."""
        for name, value in (("signature", signature), ("encrypted content", redacted), ("id", id)):
            if value is not None and value.__class__ is not str:
                _wrong(f"reasoning {name}", value)
        seg = self._last_reasoning()
        if signature is not None:
            seg.signature = (seg.signature or "") + signature
        if redacted is not None:
            seg.redacted = redacted
        if id is not None:
            seg.id = id

    def provider_part(self, provider: str, data: dict[str, Any]) -> ProviderPart:
        """Keep a provider-side block (a server tool use or result) verbatim, in its place.

        It is never executed and never assembled as a call. The part is returned so a
        stream decoder can complete ``data`` (the input streamed as deltas) later.
        """
        if data.__class__ is not dict:
            _wrong("provider block", data, "an object")
        kind: Any = data.get("type")
        if kind.__class__ is not str:
            _wrong("provider block type", kind)
        part = ProviderPart(provider, str(kind), data)
        self._order.append(part)
        self._break = True
        return part

    def citation(self, citation: dict[str, Any]) -> None:
        """Attach a citation object (kept verbatim) to the text part being built."""
        if citation.__class__ is not dict:
            _wrong("citation", citation, "an object")
        last = self._order[-1] if self._order else None
        if isinstance(last, _Segment) and last.kind == "text" and not self._break:
            seg = last
        else:  # a citation before any text of its block: the block's text part starts empty
            seg = _Segment("text", "")
            self._order.append(seg)
            self._break = False
        if seg.citations is None:
            seg.citations = []
        seg.citations.append(citation)

    def part_break(self) -> None:
        """Start a new part: the provider opened a new block (Anthropic content block,
        Responses output item), and adjacent reasoning blocks must stay separate parts
        because each carries its own signature or encrypted content."""
        self._break = True

    def _sendable(self, text: str, index: int | None) -> str:
        """``text`` without lone surrogates, with a notice when one was replaced."""
        try:
            # sendable_text's test written out: once per non-ASCII call, a call fewer.
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            clean = _SURROGATE.sub("\ufffd", text)
        if clean is not text:
            self._notice(
                "lone_surrogate",
                "a lone surrogate (no valid Unicode character) was replaced by U+FFFD",
                index,
            )
        return clean

    def _segment(self, kind: str, text: str) -> None:
        order = self._order
        last = order[-1] if order else None
        if isinstance(last, _Segment) and last.kind == kind and not self._break:
            last.pieces.append(text)
        else:
            order.append(_Segment(kind, text))
            self._break = False

    def _last_reasoning(self) -> _Segment:
        last = self._order[-1] if self._order else None
        if isinstance(last, _Segment) and last.kind == "reasoning" and not self._break:
            return last
        seg = _Segment("reasoning", "")
        self._order.append(seg)
        self._break = False
        return seg

    # -- tool calls ------------------------------------------------------------------

    def tool_fragment(  # noqa: PLR0912 — every decoder's door, flat: a function more is a call a fragment
        self, index: int | None, id: str | None, name: str | None, arguments: str | None
    ) -> None:
        """Add one fragment of the call at ``index``: any of id, name, arguments text.

        Every value is checked here, the door for all decoders: an index that is not an
        integer, or an id, name or arguments that are not strings, is a ``ProtocolError``.
        """
        if index is not None and type(index) is not int:
            _wrong("tool call index", index, "an integer")
        # Three tests written out: a loop over (name, value) pairs cost a call start
        # more than the rest of its checks.
        if id is not None and type(id) is not str:
            _wrong("tool call id", id)
        if name is not None and type(name) is not str:
            _wrong("tool call name", name)
        if arguments is not None and type(arguments) is not str:
            _wrong("tool call arguments", arguments)
        if self._wholes:
            self._open_wholes()
        call = self.calls.get(index) if index is not None else self._unindexed(id, name)
        if call is None:
            call = self._open(index)  # type: ignore[arg-type]  # _unindexed never returns None
            self.events.append(ToolCallStarted(call.index, id, name))
            # A new call's id and name, set here: a helper call per call start cost
            # ~1% of a short turn (bench/count_assembly.py).
            if id:
                call.id = id
            if name:
                call.name = name
        elif id or name:
            call, arguments = self._identify(index, call, id, name, arguments)
        if arguments:
            call.parts.append(arguments)
            if self.deltas:
                self.events.append(ToolCallDelta(call.index, arguments))
            if "}" in arguments and not call.ready and arguments.rstrip()[-1] == "}":
                self.scan(call)
        elif call.done and not call.ready and (id or name):
            self._emit_ready(call)

    def start_call(self, index: int, id: str, name: str, arguments: str) -> None:  # noqa: PLR0912, PLR0915 — every whole call's one frame (bench/README.md, thirteenth pass)
        """``tool_fragment(index, id, name, arguments)`` for a decoder that has checked
        the four types itself (the Chat decoder, on its hot path): a call's first fragment.

        A call whole in that fragment (its arguments a complete JSON object, as many
        servers send a small call, and as the scripted model does), at the next index
        of a turn whose calls have all come so, takes one straight path: parsed once,
        its request, history shape and state made once, its three events sent, and
        ``close`` takes such a turn's calls as they are (``_close_whole``). Another new
        call at a free index with an id and a name (the first fragment of every call
        OpenAI streams) is opened directly, without the general path's checks and
        branches (the types again, an index taken, a remap, a split, a re-sent id).
        Anything else goes to ``tool_fragment``: the same events and turn either way
        (tests/wire/test_start_call.py).
        """
        if (
            # The number of calls, all whole so far; -1 when not so, which a negative
            # index (a malformed one, for the general path to place) must not match.
            index >= 0
            and index == self._whole
            and id
            and name
            and arguments.endswith("}")
            and arguments.isascii()
            # No escape at all, not only no surrogate escape: one substring test where
            # two cost a call 100 instructions; a text with another escape (\u00e9,
            # as ensure_ascii JSON writes it) takes the general path, to the same result.
            and "\\u" not in arguments
        ):
            # What the first scan and _ready do with such a text, written out: nothing
            # to replace or reject, and one parse in C gives the input.
            try:
                scanned: _Scanned = _scan_finite(arguments, 0)
                value, end = scanned
            except (StopIteration, ValueError, RecursionError, FloatingPointError):
                value = None  # the general path below says why
            if type(value) is dict and end == len(arguments):
                # The pure build makes the call's request and Ready as new objects with
                # their slots stored, as the flat feeds make ToolCallDelta: a constructor
                # call runs an interpreted ``__init__`` there (a class call and a frame,
                # about 600 instructions more an object; bench/README.md, eighth pass).
                # The compiled build's constructors are C functions and it keeps them.
                # Either way the same objects (tests/wire compares this path's events
                # and turn with the general path's), and one frame: the pure build's
                # own method for this path was a Python call more a call
                # (bench/README.md, thirteenth pass).
                request: ToolRequest
                if NEW_BY_SLOTS:  # the pure build (events.py)
                    request = OBJECT_NEW(ToolRequest)
                    request.id = id
                    request.name = name
                    request.raw_arguments = arguments
                    request.input = value
                    request.error = None
                    request.index = index
                    request.repaired = request.freeform = False
                else:
                    request = ToolRequest(id, name, arguments, value, None, index)
                made = _history_shape(id, name, arguments, None)
                # No assembly state (``_Call``) until something needs it (``_open_wholes``).
                if index:
                    self._wholes.append(request)
                else:  # the turn's first call (see _NO_WHOLES)
                    self._wholes = [request]
                self._order.append(made)
                self._whole = index + 1
                if self.deltas:  # without deltas, the Ready alone (see _announce)
                    self._whole_started(index, id, name, arguments)
                ready: ToolCallReady
                if NEW_BY_SLOTS:
                    ready = OBJECT_NEW(ToolCallReady)
                    ready.index = index
                    ready.call = made
                    ready.request = request
                else:
                    ready = ToolCallReady(index, made, request)
                self.events.append(ready)
                return
        if self._wholes:
            self._open_wholes()
        calls = self.calls
        if index in calls or index < 0 or self._remapped or not id or not name:
            self.tool_fragment(index, id, name, arguments)
            return
        call = calls[index] = _Call(index, id, name)  # its own index: no call has it (not remapped)
        self._whole = -1  # not whole: close visits each call, no later call is straight
        self._order.append(call)
        events = self.events
        events.append(ToolCallStarted(index, id, name))
        if arguments:
            call.parts.append(arguments)
            if self.deltas:
                events.append(ToolCallDelta(index, arguments))
            if "}" in arguments and arguments.rstrip()[-1] == "}":
                self.scan(call)

    def _whole_started(self, index: int, id: str, name: str, arguments: str) -> None:
        """The ``ToolCallStarted`` and ``ToolCallDelta`` of a call whole in its first
        fragment, for a reader of deltas (``start_call``'s straight path; without
        deltas its Ready alone goes out): by slots in the pure build, as there."""
        events = self.events
        if NEW_BY_SLOTS:
            started: ToolCallStarted = OBJECT_NEW(ToolCallStarted)
            started.index = index
            started.id = id
            started.name = name
            events.append(started)
            delta: ToolCallDelta = OBJECT_NEW(ToolCallDelta)
            delta.index = index
            delta.arguments = arguments
            events.append(delta)
        else:
            events.append(ToolCallStarted(index, id, name))
            events.append(ToolCallDelta(index, arguments))

    def _identify(
        self,
        index: int | None,
        call: _Call,
        id: str | None,
        name: str | None,
        arguments: str | None,
    ) -> tuple[_Call, str | None]:
        """Apply a fragment's id and name to the open ``call`` at ``index``: the call
        they belong to (a new one when ``_split``), and the arguments left to add (a
        fragment that repeats the id may repeat the arguments so far)."""
        self._whole = -1  # the call may change: close visits each call
        if id and name and call.id is not None and id != call.id:
            call = self._split(index, call, id, name)  # type: ignore[arg-type]  # a call at None was never split
        resent = False
        if id:
            if call.id is None:
                call.id = id
            elif call.id == id:
                resent = True
            else:
                self._id_changed(call, id)
        if name:
            if resent and name == call.name:
                if self._first_repeat("name_repeated", call):
                    self._notice(
                        "name_repeated",
                        f"tool call {call.id} re-sent its whole name with the same id; "
                        "kept it once",
                        call.index,
                    )
            else:
                call.name += name
        if arguments and resent and call.parts:
            arguments = self._resent_arguments(call, arguments)
        return call, arguments

    def _split(self, index: int, call: _Call, id: str, name: str) -> _Call:
        """A fragment with a new id and a name on an index whose call has an id: a new
        call (servers that put parallel calls all on ``index: 0``), opened at the next
        free index; later fragments without an id on this provider index extend it."""
        new = self._open(index, split=True)
        self._notice(
            "call_split",
            f"a fragment with a new id {id!r} arrived on the index of tool call {call.id!r}; "
            f"started a new call at index {new.index}",
            new.index,
        )
        self.events.append(ToolCallStarted(new.index, id, name))
        return new

    def _first_repeat(self, kind: NoticeKind, call: _Call) -> bool:
        """A fragment re-sent the call's name or arguments whole (Novita/OpenRouter
        re-send the name with every fragment): kept once, said once per call, so True
        only the first time for ``kind`` and ``call``."""
        said = self._repeats
        if said is None:
            said = self._repeats = set()
        if (kind, call.index) in said:  # a set: a notice scan per fragment grows
            return False
        said.add((kind, call.index))
        return True

    def _resent_arguments(self, call: _Call, arguments: str) -> str:
        """What is new in ``arguments`` of a fragment that repeated the call's id.

        A server that re-sends the arguments whole (cumulative) rather than as deltas
        can be told only where the fragment starts with everything so far: while the
        call has one part (each cumulative fragment leaves it so), or right after it
        was reported ready (a closed object cannot be continued). Both tests are
        bounded by the fragment's own length, so the work stays linear.
        """
        parts = call.parts
        if len(parts) == 1:
            so_far = parts[0]
            if not arguments.startswith(so_far):
                return arguments
        elif call.ready and len(parts) == call.ready_parts and arguments.startswith(parts[0]):
            so_far = "".join(parts)
            if not arguments.startswith(so_far):
                return arguments
        else:
            return arguments
        if self._first_repeat("arguments_repeated", call):
            self._notice(
                "arguments_repeated",
                f"tool call {call.id} re-sent its arguments so far with the same id; "
                "kept them once",
                call.index,
            )
        new = arguments[len(so_far) :]
        if not new or call.ready:
            return new  # a repetition; or text after a closed object, added as sent
        # Kept as one part, so that the next whole re-send is told the same way; the
        # closure scan starts again on the whole text (no longer than this fragment).
        call.parts = [arguments]
        call.scanner = None
        call.scanned = 0
        if self.deltas:
            self.events.append(ToolCallDelta(call.index, new))
        if "}" in new and new.rstrip()[-1] == "}":
            self.scan(call)
        return ""

    def custom_call(
        self, index: int, id: str | None, name: str | None, input: str | None = None
    ) -> None:
        """Open (or add to) the custom tool call at ``index``: its input is free-form text.

        A custom call (OpenAI's free-form input tools) is a client call like any other,
        but its input is the model's raw text: it is never scanned or parsed as JSON,
        is ready only when the provider says it is finished (``tool_arguments_done``,
        or the end of the turn), and its request's ``input`` is that text.
        """
        if type(index) is not int:
            _wrong("tool call index", index, "an integer")
        self.tool_fragment(index, id, name, None)
        self.calls[index].freeform = True
        if input:
            self.custom_input(index, input)

    def custom_input(self, index: int, text: str) -> None:
        """Add a fragment of a custom call's raw input text."""
        if type(text) is not str:
            _wrong("custom tool call input", text)
        if self._wholes:
            self._open_wholes()
        call = self.calls.get(index) if type(index) is int else None
        if call is None:
            raise ProtocolError(
                "custom tool input for a call that never started", where=f"index {index}"
            )
        if text:
            call.parts.append(text)
            if self.deltas:
                self.events.append(ToolCallDelta(call.index, text))

    def arguments(self, index: int | None, text: str) -> None:
        """Add an arguments-only fragment: ``tool_fragment(index, None, None, text)``, faster.

        Nearly every fragment of a streamed call is one of these, so this path does only
        an append, one event and one substring test (a scan only when the fragment
        ends in ``}``).
        """
        call = self.calls.get(index) if type(index) is int else None
        if call is None or not text or type(text) is not str:
            self.tool_fragment(index, None, None, text)  # opens the whole calls, if any
            return
        # The same three steps as in tool_fragment, written out: a helper call here would
        # cost ~5% of the per-fragment time (bench/bench_assembly.py). The stream
        # decoders repeat them inline for the same reason.
        call.parts.append(text)
        if self.deltas:
            self.events.append(ToolCallDelta(call.index, text))
        if "}" in text and not call.ready and text.rstrip()[-1] == "}":
            self.scan(call)

    def tool_arguments_done(self, index: int, arguments: str | None = None) -> None:
        """The call's arguments are final; ``arguments`` (if given) is their full text."""
        if type(index) is not int:
            _wrong("tool call index", index, "an integer")
        if arguments is not None and type(arguments) is not str:
            _wrong("tool call arguments", arguments)
        if self._wholes:
            self._open_wholes()
        call = self.calls.get(index)
        if call is None:
            raise ProtocolError(
                "arguments finished for a tool call that never started", where=f"index {index}"
            )
        if arguments is not None:
            streamed = "".join(call.parts)
            if streamed != arguments:
                self._whole = -1  # the call's text is replaced: close visits each call
                if streamed:
                    self._notice(
                        "arguments_mismatch",
                        "final arguments differ from the streamed fragments; using the final text",
                        index,
                    )
                call.parts = [arguments]
                call.request = None
                if call.ready:
                    call.ready = False  # the Turn will carry the corrected request
        call.done = True
        if not call.ready:
            self._emit_ready(call)

    def _open(self, index: int, *, split: bool = False) -> _Call:
        """Open a call at provider ``index``; its own index is that one unless taken
        (or ``split``: another call was opened there, or negative: a call read from
        content, ``content_calls.py``), then the next free one."""
        own = index
        # Without a remap, a provider index not in ``calls`` is no call's own index.
        if split or own < 0 or (self._remapped and own in self.call_indexes()):
            own = max(self.call_indexes(), default=-1) + 1
            self._remapped = True
        call = _Call(own)
        self.calls[index] = call
        self._whole = -1  # not whole: close visits each call, no later call is straight
        self._order.append(call)
        return call

    def _unindexed(self, id: str | None, name: str | None) -> _Call:
        """A fragment without an index: merge into the one open call, or start a new one."""
        open_calls = [c for c in self._all_calls() if not c.ready]
        if len(open_calls) == 1 and not (id and open_calls[0].id and id != open_calls[0].id):
            call = open_calls[0]
            self._notice(
                "missing_index",
                "a tool-call fragment had no index; merged into the only open call",
                call.index,
            )
            return call
        if not open_calls and (id or name):
            index = max(self.call_indexes(), default=-1) + 1
            self._notice(
                "missing_index", "a tool-call fragment had no index; started a new call", index
            )
            call = self._open(index)
            self.events.append(ToolCallStarted(index, id, name))
            return call
        raise TurnError(
            f"a tool-call fragment has no index and {len(open_calls)} calls are open; it cannot be placed",
            index=None,
            problem="missing_index",
        )

    def _id_changed(self, call: _Call, id: str) -> None:
        """A new id without a name for an open call: kept the first, said so."""
        self._notice(
            "id_changed",
            f"tool call id changed from {call.id!r} to {id!r}; keeping the first",
            call.index,
        )

    def scan(self, call: _Call) -> None:
        """The last fragment of ``call`` ends in ``}``: scan what is new since the last scan
        and emit ``ToolCallReady`` if the arguments JSON has closed.

        Fragments ending elsewhere cannot close the object, so they are not scanned
        (the stream decoders test that on their own hot path before calling this).
        """
        if call.freeform:
            return  # raw text: ready when the provider says it is finished
        parts = call.parts
        scanner = call.scanner
        if scanner is None:
            # The first scan covers all the text so far. A small call has usually
            # arrived whole by then (its braces balance), and one parse in C both
            # proves that and gives the input, kept for the request. Otherwise the
            # scanner takes over and sees each later fragment once.
            text = "".join(parts)
            call.scanned = len(parts)
            if text.count("{") == text.count("}"):
                try:
                    scanned: _Scanned = _scan_finite(text, 0)
                    value, end = scanned
                except (StopIteration, ValueError, RecursionError, FloatingPointError):
                    pass  # the scanner takes over; the close parses and says why
                else:
                    if type(value) is dict and (end == len(text) or text[end:].isspace()):
                        call.done = True
                        self._ready(call, text, value)
                        return
            scanner = call.scanner = ClosureScanner()
        else:
            start = call.scanned
            text = parts[-1] if start == len(parts) - 1 else "".join(parts[start:])
            call.scanned = len(parts)
        if scanner.closes(text):
            call.done = True
            self._emit_ready(call)

    def _emit_ready(self, call: _Call, arguments: str | None = None, parsed: Any = _UNSET) -> None:
        """Emit ``ToolCallReady`` (``arguments`` and ``parsed``: the joined text and its
        value, when the caller has them already)."""
        if not call.id or not call.name:
            return  # reported when the id or name arrives, or as a TurnError at close
        if arguments is None:
            arguments = "".join(call.parts)
        replaced = False
        if not arguments.isascii():
            clean = self._sendable(arguments, call.index)
            if clean is not arguments:  # ``parsed`` holds the lone surrogate: parse again
                replaced = True
                parsed = _UNSET
            arguments = clean
        request = self._request(call, arguments, parsed)
        call.replaced = replaced
        call.ready = True
        call.ready_parts = len(call.parts)
        self._announce(ToolCallReady(call.index, self._history_call(call, arguments), request))

    def _announce(self, ready: ToolCallReady) -> None:
        """Send ``ready``. Without deltas, a call whose ``ToolCallStarted`` is the last
        event since the last take (a decoder takes them at each item: the call came
        whole in the item that opened it) is announced by its Ready alone, in the
        Started's place: the Ready says all the Started would, nothing came between,
        and an agent run nobody listens to pays one event and one step of the model's
        stream less a call (bench/README.md, tenth pass). With deltas, every call has
        its Started, as a listener expects."""
        events = self.events
        if not self.deltas and events:
            last = events[-1]
            if type(last) is ToolCallStarted and last.index == ready.index:
                events[-1] = ready
                return
        events.append(ready)

    def _ready(self, call: _Call, text: str, value: dict[str, Any]) -> None:
        """``_emit_ready(call, text, value)``, the common case written out: a call announced
        for the first time, its ``text`` ASCII without a surrogate escape (nothing to
        replace or reject), parsed to an object. Its request and history shape are made
        here, without ``_request``'s, ``_checked``'s and ``_history_call``'s tests for
        shapes made earlier, free-form input, lone surrogates and empty text."""
        id = call.id
        name = call.name
        if (
            not id
            or not name
            or call.request is not None
            or call.call is not None
            or not text.isascii()
            or "\\ud" in text
            or "\\uD" in text
        ):
            self._emit_ready(call, text, value)
            return
        index = call.index
        request = call.request = ToolRequest(id, name, text, value, None, index)
        made = call.call = _history_shape(id, name, text, call.caller)
        call.replaced = False
        call.ready = True
        call.ready_parts = len(call.parts)
        self._announce(ToolCallReady(index, made, request))

    def _request(self, call: _Call, arguments: str, parsed: Any = _UNSET) -> ToolRequest:
        request = call.request
        if request is None or request.raw_arguments != arguments or request.name != call.name:
            if call.freeform:  # the raw text is the input: no JSON, no repair
                request = ToolRequest(call.id or "", call.name, arguments, arguments, None)
                request.index = call.index
                request.freeform = True
                call.request = request
                return request
            if parsed is _UNSET:
                value, error = parse_arguments(call.name, arguments)
            else:
                value, error = _checked(call.name, parsed, arguments)
            request = ToolRequest(call.id or "", call.name, arguments, value, error, call.index)
            call.request = request
        return request

    @staticmethod
    def _history_call(call: _Call, arguments: str) -> ToolCall:
        """The call as kept in history; built once when ready and reused by ``close``."""
        made = call.call
        # _history_arguments written out (once per call): empty text is kept as "{}".
        history = arguments if call.freeform or (arguments and not arguments.isspace()) else "{}"
        if made is None or made.arguments != history or made.name != call.name:
            made = call.call = _history_shape(call.id or "", call.name, history, call.caller)
            if call.freeform:
                made.freeform = True
        return made

    # -- end of turn -----------------------------------------------------------------

    def finish(self, reason: str) -> None:
        """Record the provider's finish reason (OpenAI vocabulary)."""
        if type(reason) is not str:
            _wrong("finish reason", reason)
        self._finish = reason
        self.events.append(Finished(reason))

    def set_usage(self, usage: Usage) -> None:
        """Record token usage (providers report running totals)."""
        self._usage = usage
        self._counted = None
        self.events.append(UsageReported(usage))

    def report_counts(self, counts: tuple[int, int, int, int, int]) -> None:
        """``set_usage(Usage(*counts))``, the ``Usage`` built only when it is read (the
        event's or the turn's): a provider that reports usage more than once a turn
        (Anthropic) no longer builds one per report."""
        event = UsageReported.of_counts(counts)
        self._usage = None
        self._counted = event
        self.events.append(event)

    def call_indexes(self) -> list[int]:
        """The indexes of the tool calls seen so far (each call's own, in order opened)."""
        return [call.index for call in self._all_calls()]

    def _all_calls(self) -> list[_Call]:
        """Every call, in the order opened (``calls`` holds the last one per index)."""
        if self._wholes:
            self._open_wholes()
        return [item for item in self._order if type(item) is _Call]

    def call_count(self) -> int:
        """How many provider indexes hold a call: ``len(calls)`` with the calls that came
        whole, which ``calls`` holds only once something needs their state."""
        return len(self.calls) + len(self._wholes)

    def _open_wholes(self) -> None:
        """Give each call that came whole its assembly state, in ``calls`` and in its
        place in ``_order``, for a fragment, a change or a question that needs it: until
        then its request and history shape were all a turn of such calls needed
        (``_close_whole``), where a ``_Call`` made with each was about 70 bytecodes a
        call of the pure build (bench/README.md, twelfth pass). Rare: a later fragment
        for such a call, or a call that comes another way. ``close`` visits each call
        after."""
        requests = iter(self._wholes)
        self._wholes = _NO_WHOLES
        self._whole = -1
        order = self._order
        for position, item in enumerate(order):
            if type(item) is _TOOL_CALL:  # a whole call's shape: whole calls come in order
                request = next(requests)
                call = _Call(request.index, request.id, request.name, request, item)
                order[position] = self.calls[request.index] = call

    @property
    def finish_reason(self) -> str | None:
        """The finish reason recorded so far."""
        return self._finish

    @property
    def usage(self) -> Usage:
        """The usage recorded so far."""
        usage = self._usage
        if usage is None:
            counted = self._counted
            usage = self._usage = Usage() if counted is None else counted.usage
        return usage

    def notice(self, kind: NoticeKind, message: str, index: int | None = None) -> None:
        """Report something suspicious that does not break the turn."""
        self._notice(kind, message, index)

    def _notice(self, kind: NoticeKind, message: str, index: int | None) -> None:
        notice = Notice(kind, message, index)
        self._notices.append(notice)
        self.events.append(notice)

    def apply(self, event: Event) -> None:
        """Consume one event from a text-format parser (``toolwire.formats``)."""
        if isinstance(event, ToolCallDelta):
            self.tool_fragment(event.index, None, None, event.arguments)
        elif isinstance(event, TextDelta):
            self.text(event.text)
        elif isinstance(event, ReasoningDelta):
            self.reasoning(event.text)
        elif isinstance(event, ToolCallStarted):
            self.tool_fragment(event.index, event.id, event.name, None)
        elif isinstance(event, Finished):
            self.finish(event.reason)
        elif isinstance(event, UsageReported):
            self.set_usage(event.usage)
        elif isinstance(event, Notice):
            self._notice(event.kind, event.message, event.index)

    def close(self) -> Turn:
        """Apply the end-of-turn rules and return the Turn (``TurnError`` if broken)."""
        if self._whole >= 0:  # no call (0), or every call came whole (their number)
            whole = self._close_whole()
            if whole is not None:
                return whole
            self._open_wholes()  # the general path visits each call
        parts: list[Part] = []
        requests: list[ToolRequest] = []
        if self._remapped:  # calls split from one provider index: by their own index
            calls = sorted(self._all_calls(), key=_own_index)
        else:
            # By provider index, which is each call's own here. Calls are opened in index
            # order nearly always: sorted only when not (a sort of the keys and a lookup
            # per call cost a short turn about 1,600 instructions, compiled).
            calls = list(self.calls.values())
            if len(calls) > 1 and not _ascending(calls):
                calls.sort(key=_own_index)
        self._check_calls(calls)
        call_iter = iter(calls)
        for item in self._order:
            if type(item) is _Segment:
                parts.append(_segment_part(item))
            elif isinstance(item, ProviderPart):
                parts.append(item)
            else:
                call = next(call_iter)  # calls take their slots in index order
                made, request = call.call, call.request
                if (
                    call.ready
                    and made is not None
                    and request is not None
                    and call.ready_parts == len(call.parts)
                    and made.name == call.name
                    and not call.replaced
                ):
                    # Nothing arrived since ToolCallReady: both shapes stand as announced
                    # (parts only grow; a replaced text resets ``ready``), and the text
                    # is not searched for lone surrogates a second time. Text that had
                    # one takes the full path, which reports the replacement again.
                    requests.append(request)
                    parts.append(made)
                    continue
                arguments = "".join(call.parts)
                if not arguments.isascii():
                    arguments = self._sendable(arguments, call.index)
                announced = call.request if call.ready else None
                request = self._request(call, arguments)
                if announced is not None and request is not announced:
                    self._changed_after_ready(call)
                requests.append(request)
                parts.append(self._history_call(call, arguments))
        return self._turn(parts, requests)

    def _close_whole(self) -> Turn | None:
        """``close`` for a turn without calls, or one whose calls all came whole in their
        first fragments (``_wholes``): each call's request and history shape are the ones
        announced, taken as they are, or None when the general path must decide (text
        between or after the calls, a repeated id)."""
        wholes = self._wholes
        if not wholes:  # no call (every run's answer): its parts, nothing to check
            return self._turn(_plain_parts(self._order), [])
        order = self._order
        before = len(order) - len(wholes)
        shapes = order[before:]
        # The calls come last in the turn's order, their history shapes in their places.
        # Nothing else can have changed a whole call: each change, and each fragment
        # added to one (a flat feed finds no call in ``calls`` for it and hands it to
        # ``tool_fragment``), opens the whole calls first (``_open_wholes``).
        if not _SHAPES.issuperset(map(type, shapes)):
            return None
        if len({request.id for request in wholes}) != len(wholes):  # the checker words it
            return None
        parts = _plain_parts(order[:before]) if before else []  # text before the calls
        parts += shapes  # type: ignore[arg-type]  # each a ToolCall, tested above
        return self._turn(parts, wholes.copy())

    def _turn(self, parts: list[Part], requests: list[ToolRequest]) -> Turn:
        self._check_finish(len(requests))
        turn = Turn(AssistantMessage(parts), requests, self._finish, self.usage, self._notices)
        if self._refused or self._logprobs is not None:
            turn.refused = self._refused
            turn.logprobs = self._logprobs
        return turn

    def _changed_after_ready(self, call: _Call) -> None:
        """The call changed after ``ToolCallReady`` announced it (more arguments, a name
        fragment): what started early from that event was not the final call."""
        self._notices.append(
            Notice(
                "changed_after_ready",
                f"tool call {call.id} changed after it was reported ready; the final "
                "turn's call replaces the one announced",
                call.index,
            )
        )

    def _check_calls(self, calls: list[_Call]) -> None:
        seen: set[str] = set()
        for call in calls:
            if not call.id:
                raise TurnError(
                    f"tool call at index {call.index} did not include an id",
                    index=call.index,
                    problem="missing_id",
                )
            if not call.name:
                raise TurnError(
                    f"tool call {call.id} at index {call.index} did not include a name",
                    index=call.index,
                    problem="missing_name",
                )
            if call.id in seen:
                raise TurnError(
                    f"duplicate tool call id {call.id} at index {call.index}",
                    index=call.index,
                    problem="duplicate_id",
                )
            seen.add(call.id)

    def _check_finish(self, n_calls: int) -> None:
        finish = self._finish
        if finish == "tool_calls" and n_calls == 0:
            self._notices.append(
                Notice("empty_call", "finish reason is tool_calls but the turn has no tool call")
            )
        elif n_calls and finish not in (None, "tool_calls"):
            self._notices.append(
                Notice(
                    "finish_reason_mismatch",
                    f"the turn has {n_calls} tool call(s) but finish reason {finish!r}",
                )
            )


def _history_shape(id: str, name: str, arguments: str, caller: dict[str, Any] | None) -> ToolCall:
    """``ToolCall(id, name, arguments, "tool_call", False, caller)``, one a call, made
    without the ``__init__`` ``@dataclass`` generates: that one runs interpreted in both
    builds (messages.py is not compiled), about 2,000 instructions, where a new object
    and six slot stores cost the compiled build a few hundred and the pure build half
    (bench/README.md, eighth pass). Every field is set here: tests/wire checks this
    against ``dataclasses.fields(ToolCall)`` and the constructor's result."""
    made: ToolCall = OBJECT_NEW(_TOOL_CALL)
    made.id = id
    made.name = name
    made.arguments = arguments
    made.kind = "tool_call"
    made.freeform = False
    made.caller = caller
    return made


def _wrong(what: str, value: Any, expected: str = "a string") -> None:
    kind = "null" if value is None else type(value).__name__
    raise ProtocolError(f"{what} must be {expected}, got {kind} {str(value)[:20]!r}")


def _own_index(call: _Call) -> int:
    return call.index


def _ascending(calls: list[_Call]) -> bool:
    """True when ``calls`` are in the order of their own indexes."""
    for i in range(1, len(calls)):  # noqa: SIM110 — a loop: no generator in the pure build
        if calls[i - 1].index > calls[i].index:
            return False
    return True


def _plain_parts(items: list[_Segment | _Call | ProviderPart | ToolCall]) -> list[Part]:
    """The parts of ``items``, a stretch of a turn's order that holds no call."""
    return [
        _segment_part(item) if type(item) is _Segment else item  # type: ignore[misc]  # no call here
        for item in items
    ]


def _segment_part(seg: _Segment) -> Part:
    text = "".join(seg.pieces)
    if seg.kind == "text":
        return TextPart(text, seg.citations)
    if seg.kind == "refusal":
        return RefusalPart(text, seg.id)
    return ReasoningPart(text, seg.signature, seg.redacted, seg.id)


def _history_arguments(arguments: str) -> str:
    """Arguments as kept in history: verbatim, except that empty text becomes ``{}``.

    Providers and chat templates reject an empty arguments string on the way back, and
    an empty string means "no arguments" on the way in.
    """
    return arguments if arguments and not arguments.isspace() else "{}"
