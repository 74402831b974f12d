"""What the three provider stream decoders share: input handling and failure rules.

A decoder accepts decoded items (dicts, or official SDK objects, which are turned into
dicts), or raw SSE bytes split anywhere. Provider data is checked where it enters, by
the checks at the door of ``fields.py`` (``field`` for a required key,
``as_object``/``as_list``/``as_text``/``as_index`` for a type; the body decoders use
the same ones), and the assembler's methods check what they are handed. A missing key or a wrong type is
therefore a ``ProtocolError`` by decision, naming the field and the item number; any
other exception is a bug in toolwire and propagates as it is (the fuzz tests fail on
it, as h11's do). A decoder that failed stays failed and raises the same error again.

The benchmarked decoders (OpenAI Chat, Anthropic) write their own ``feed`` with the
same short prologue and epilogue as the general ``_decode_with`` here: a shared wrapper
would add a Python call per streamed fragment, the largest single cost left on that
path (bench/bench_assembly.py measures it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from ..errors import DecoderStateError, ProtocolError, ToolwireError
from ..turn import Turn
from .assembler import Assembler, loads_json
from .events import Event
from .fields import as_dict
from .sse import SSEDecoder

try:  # read by mypyc when it compiles this module; a no-op at run time
    from mypy_extensions import mypyc_attr
except ImportError:  # not installed (it comes with mypy): the no-op is all that is needed

    def mypyc_attr(*_: str, **__: object) -> Callable[[type], type]:  # type: ignore[misc]
        return lambda cls: cls


__all__ = ["StreamDecoder"]


# Your own decoder may subclass this one in the compiled build too (hatch_build.py).
@mypyc_attr(allow_interpreted_subclasses=True)
class StreamDecoder(ABC):
    """Base class: one instance decodes one model turn."""

    provider: ClassVar[str] = ""

    def __init__(self, *, deltas: bool = True) -> None:
        """``deltas=False``: ``feed`` reports no ``ToolCallDelta``, and a call whole in one
        item as its ``ToolCallReady`` alone (see ``Assembler``)."""
        self._assembler = Assembler(deltas=deltas)
        self._deltas = deltas
        self._sse: SSEDecoder | None = None
        self._items = 0
        self._ended = False  # the provider's terminal signal arrived
        self._closed = False
        self._error: ToolwireError | None = None
        self._dead = False  # closed or failed: one flag for the hot path to test

    # -- public API --------------------------------------------------------------------

    def drop_deltas(self) -> None:
        """Report no ``ToolCallDelta`` from now on, and a call whole in one item as its
        ``ToolCallReady`` alone, as ``deltas=False`` would: for a caller that learns
        only once the decoder exists that nobody reads them (an agent run nothing
        listens to; the turn is the same)."""
        self._deltas = False
        self._assembler.deltas = False

    @abstractmethod
    def feed(self, item: Any) -> list[Event]:
        """Consume one decoded chunk or event (a dict or an SDK object); return events."""

    def feed_bytes(self, data: bytes | bytearray | memoryview) -> list[Event]:
        """Consume raw SSE bytes, split anywhere; return the events they complete."""
        if self._dead:
            self._check_open()
        if self._sse is None:
            self._sse = SSEDecoder()
        try:
            payloads = self._sse.feed_data(data)
        except ToolwireError as exc:
            raise self._fail(exc) from None
        return self._feed_payloads(payloads)

    def close(self, *, source_ended: bool = False) -> Turn:
        """End of the response: return the Turn, or raise the error that broke it.

        ``source_ended=True``: the source of decoded items ended normally (an SDK's
        stream iterator finished without an exception), which is what OpenAI's
        ``[DONE]`` says on the wire and the SDK strips; a Chat stream without a finish
        reason is then accepted as ``[DONE]`` would have it (``finish_reason_inferred``),
        so the SDK feed and the bytes agree. Without it, a stream with no terminal
        signal was cut. Providers with a terminal event of their own are unaffected.
        """
        if self._dead:  # as feed tests it: no call when open
            self._check_open()
        if self._sse is not None:
            try:
                payloads = self._sse.close_data()
            except ToolwireError as exc:  # a truncated UTF-8 sequence: the decoder stays failed
                raise self._fail(exc) from None
            self._feed_payloads(payloads)
        if source_ended and not self._ended:
            self._on_done_marker()
        self._closed = self._dead = True
        if not self._ended:
            raise self._fail(
                ProtocolError(
                    f"the {self.provider} stream ended before the turn finished (no terminal event)",
                    where=f"after item {self._items}",
                    hint="the connection was probably cut; retry the request",
                    partial=self._partial_turn(),
                )
            )
        try:
            return self._assembler.close()
        except ToolwireError as exc:
            raise self._fail(exc) from None

    def _partial_turn(self) -> Turn | None:
        """What was assembled so far, for an error report (None if it cannot be built)."""
        try:
            return self._assembler.close()
        except ToolwireError:
            return None

    @property
    def assembler(self) -> Assembler:
        """The assembler this decoder feeds (finish reason and usage so far)."""
        return self._assembler

    # -- for subclasses ------------------------------------------------------------------

    def _decode_with(self, handle: Callable[[dict[str, Any]], None], item: Any) -> list[Event]:
        """The general ``feed``: ``handle`` translates the item into assembler calls.

        The decoders whose per-fragment cost is benchmarked (OpenAI Chat, Anthropic)
        write this prologue and epilogue into their own ``feed`` instead, with their
        common item handled inline, which saves two Python calls per streamed fragment.
        """
        if self._dead:
            self._check_open()
        self._items += 1
        try:
            handle(item if item.__class__ is dict else as_dict(item))
        except ToolwireError as exc:  # only malformed data raises these; bugs propagate
            raise self._fail(exc) from None
        return self._assembler.take_events()

    def _on_done_marker(self) -> None:  # noqa: B027  # a hook: only OpenAI Chat needs it
        """An SSE ``[DONE]`` payload (OpenAI's end marker); others ignore it."""

    # -- internals -----------------------------------------------------------------------

    def _feed_payloads(self, payloads: list[str]) -> list[Event]:
        out: list[Event] = []
        feed = self.feed
        for data in payloads:
            if data == "[DONE]":
                self._on_done_marker()
                continue
            try:
                item = loads_json(data)
            except (ValueError, RecursionError) as exc:
                raise self._fail(
                    ProtocolError(
                        f"SSE data is not JSON ({exc}): {data[:80]!r}",
                        where=f"SSE event {self._items + 1}",
                    )
                ) from None
            if item.__class__ is not dict:
                raise self._fail(
                    ProtocolError(
                        f"SSE data is JSON but not an object: {data[:80]!r}",
                        where=f"SSE event {self._items + 1}",
                    )
                )
            out += feed(item)
        return out

    def _check_open(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise DecoderStateError(
                f"{type(self).__name__} is closed; create a new one for each turn"
            )

    def _fail(self, exc: ToolwireError) -> ToolwireError:
        if isinstance(exc, ProtocolError) and not exc.where:
            exc.where = f"item {self._items}"
        self._error = exc
        self._dead = True
        return exc
