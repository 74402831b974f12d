"""From a model's raw text to a ``Turn``, through the one assembler.

A text format's stream emits wire events; :class:`TextTurnDecoder` applies them to an
``Assembler`` exactly as a provider decoder would, so a raw completion from an
open-weight model ends in the same ``Turn`` (same rules for ids, names, duplicate ids and
per-call JSON errors, same ``ToolCallReady`` the moment a call's arguments close) as an
OpenAI or Anthropic stream. The raw-completion provider and the embedded local model
use it too, with ``require_end=True``.

Two things a provider stream never does are handled here:

* **Retraction.** A call the format announced and then found cut off or malformed is
  retracted (``ToolCallRetracted``, passed on to the caller so that an early-started
  call is cancelled); the assembler is rebuilt from the events applied so far without
  that call, so the ``Turn`` holds exactly what a whole parse of the text holds.
* **Recovered markup.** A call the format recovered (a ``repaired_call`` notice) gets
  ``ToolRequest.repaired``, so the tools' repair policy decides whether it may run.

**No calls allowed.** With ``calls=False`` (no tools offered, or ``tool_choice`` was
``none``: the caller said the model may not call a tool) the text stays text, verbatim,
markup included, as an OpenAI server answers such a turn; the format only looks, and a
``calls_in_content`` notice says when the text held whole calls in its markup (the
same rule as a hosted model's answer text, :mod:`toolwire.wire.content_calls`).

The finish reason: ``stop`` (or none given) becomes ``tool_calls`` when the turn holds
calls, because text servers do not know about tool calls; any other reason (``length``)
is kept, so a cut-off turn stays visible.
"""

from __future__ import annotations

from ..errors import DecoderStateError, ProtocolError
from ..messages import Usage
from ..turn import Notice, NoticeKind, Turn
from ..wire.assembler import Assembler
from ..wire.events import (
    Event,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRetracted,
    ToolCallStarted,
)
from .base import Format, FormatStream
from .results import REPAIRED

__all__ = ["TextTurnDecoder"]


class TextTurnDecoder:
    """Decodes one raw-text model turn: ``feed(text)`` events, then ``close()`` a Turn.

    Providers use the three-step form: :meth:`text` per piece, :meth:`end` with the
    server's finish reason, :meth:`close` for the Turn.

    Args:
        fmt: The model's tool-call format.
        id_prefix: Prefix of generated call ids (random when ``None``).
        strict: Raise ``FormatError`` on a malformed call instead of passing it through.
        hold_calls: Emit each call only once complete (never retracted).
        require_end: :meth:`close` without a prior :meth:`end` is a cut stream
            (``ProtocolError``) instead of a normal stop.
        calls: ``False``: no tool may be called; the text is kept as text (see the
            module's docstring).
    """

    def __init__(
        self,
        fmt: Format,
        *,
        id_prefix: str | None = None,
        strict: bool = False,
        hold_calls: bool = False,
        require_end: bool = False,
        calls: bool = True,
    ) -> None:
        looking = not calls  # whole calls only: a looking parse counts, never retracts
        self._stream: FormatStream = fmt.stream(
            id_prefix=id_prefix, strict=strict and calls, hold_calls=hold_calls or looking
        )
        self._calls = calls
        self._markup = f"{fmt.family}/{fmt.variant}"
        self._seen = 0  # whole calls the looking parse found
        self._asm = Assembler()
        self._applied: list[Event] = []  # format events applied, replayed on a retraction
        self._repaired: set[int] = set()
        self._require_end = require_end
        self._ended = False

    @property
    def ended(self) -> bool:
        """True once :meth:`end` was called."""
        return self._ended

    def feed(self, text: str) -> list[Event]:
        """Consume the next piece of generated text; return the events it completes."""
        if self._ended:
            raise DecoderStateError("TextTurnDecoder fed after the output ended")
        if not self._calls:
            self._look(self._stream.feed(text))
            return self._apply([TextDelta(text)] if text else [])
        return self._apply(self._stream.feed(text))

    text = feed

    def end(self, finish_reason: str | None = "stop") -> list[Event]:
        """The output is over: flush the format and record why it ended.

        A call the output ended inside is retracted and its text becomes content
        (``strict``: ``FormatError``).
        """
        if self._ended:
            raise DecoderStateError("TextTurnDecoder.end() called twice")
        self._ended = True
        out = self._apply(self._stream.close() if self._calls else self._looked())
        reason = finish_reason or "stop"
        if reason == "stop" and self._asm.call_indexes():
            reason = "tool_calls"
        self._asm.finish(reason)
        return out + self._asm.take_events()

    def notice(self, kind: NoticeKind, message: str) -> list[Event]:
        """Report something about the output itself (the provider's, such as a
        generation it stopped); the notice goes into the Turn like a format's."""
        return self._apply([Notice(kind, message)])

    def usage(self, usage: Usage) -> list[Event]:
        """Record token usage; return the ``UsageReported`` event."""
        self._asm.set_usage(usage)
        return self._asm.take_events()

    def close(self, finish_reason: str | None = "stop") -> Turn:
        """Return the Turn, ending the output first with ``finish_reason`` if needed.

        Raises:
            ProtocolError: ``require_end`` and :meth:`end` never came (the text stream
                was cut); ``partial`` holds what arrived.
        """
        if not self._ended:
            if self._require_end:
                raise ProtocolError(
                    "the text stream ended before the model finished (no finish reason)",
                    hint="the connection was probably cut; retry the request",
                    partial=self._partial(),
                )
            self.end(finish_reason)
        turn = self._asm.close()
        for request in turn.requests:
            request.repaired = request.index in self._repaired
        return turn

    # ---- looking only (calls=False)

    def _look(self, events: list[Event]) -> None:
        self._seen += sum(isinstance(event, ToolCallStarted) for event in events)

    def _looked(self) -> list[Event]:
        """The end of a looking parse: a notice when the text held whole calls."""
        self._look(self._stream.close())
        if not self._seen:
            return []
        message = (
            f"the answer text holds {self._seen} tool call(s) in {self._markup} markup; "
            "kept as text (no tools were offered, or tool_choice was none)"
        )
        return [Notice("calls_in_content", message)]

    # ---- applying format events

    def _apply(self, events: list[Event]) -> list[Event]:
        asm = self._asm
        out: list[Event] = []
        for event in events:
            if isinstance(event, ToolCallRetracted):
                out += asm.take_events()
                self._retract(event.index)
                asm = self._asm
                out.append(event)
                continue
            if isinstance(event, Notice) and event.kind == REPAIRED and event.index is not None:
                self._repaired.add(event.index)
            self._applied.append(event)
            asm.apply(event)
        out += asm.take_events()
        for event in out:
            if isinstance(event, ToolCallReady) and event.index in self._repaired:
                event.request.repaired = True
        return out

    def _retract(self, index: int) -> None:
        """Rebuild the assembler from the events applied so far, without call ``index``."""
        kept = [e for e in self._applied if not _belongs_to(e, index)]
        self._applied = kept
        self._repaired.discard(index)
        asm = Assembler()
        for event in kept:
            asm.apply(event)
        asm.take_events()  # a replay: its events went out when first applied
        self._asm = asm

    def _partial(self) -> Turn | None:
        try:
            return self._asm.close()
        except ProtocolError:
            return None


def _belongs_to(event: Event, index: int) -> bool:
    if isinstance(event, (ToolCallStarted, ToolCallDelta)):
        return event.index == index
    return isinstance(event, Notice) and event.index == index
