"""One model turn from plain output text: a tool-call format feeding the one assembler.

The raw-completion provider (text chunks in SSE) and the embedded local model (text
pieces from llama.cpp) both produce plain text; a format of :mod:`toolwire.formats`
separates content, reasoning and calls as the text arrives, and its events go through
the same :class:`~toolwire.wire.assembler.Assembler` as every provider stream, so the
same rules (ids, names, early ``ToolCallReady``) hold.
"""

from __future__ import annotations

from ..errors import DecoderStateError, ProtocolError
from ..formats import Format
from ..messages import Usage
from ..turn import Turn
from ..wire.assembler import Assembler
from ..wire.events import Event

__all__ = ["TextTurn"]


class TextTurn:
    """Decodes one output text, fed in pieces, into events and a ``Turn``.

    Args:
        fmt: The model's tool-call format.
        id_prefix: Prefix of generated call ids (random when ``None``).
    """

    def __init__(self, fmt: Format, *, id_prefix: str | None = None) -> None:
        self._stream = fmt.stream(id_prefix=id_prefix)
        self._asm = Assembler()
        self._ended = False

    @property
    def ended(self) -> bool:
        """True once :meth:`end` was called."""
        return self._ended

    def text(self, piece: str) -> list[Event]:
        """Consume a piece of output text; return the events it completes.

        Raises:
            FormatError: The model wrote a malformed tool call.
        """
        if self._ended:
            raise DecoderStateError("TextTurn.text() called after end()")
        return self._apply(self._stream.feed(piece))

    def end(self, finish_reason: str | None) -> list[Event]:
        """The output is over: flush the format and record why it ended.

        ``stop`` becomes ``tool_calls`` when the output held calls (servers that do not
        parse tools report ``stop``); ``length`` stays, so a cut-off turn is visible.

        Raises:
            FormatError: The output ended inside a tool call.
        """
        if self._ended:
            raise DecoderStateError("TextTurn.end() called twice")
        self._ended = True
        out = self._apply(self._stream.close())
        reason = finish_reason or "stop"
        if reason == "stop" and self._stream.call_count:
            reason = "tool_calls"
        self._asm.events = out
        self._asm.finish(reason)
        return out

    def usage(self, usage: Usage) -> list[Event]:
        """Record token usage; return the ``UsageReported`` event."""
        out: list[Event] = []
        self._asm.events = out
        self._asm.set_usage(usage)
        return out

    def close(self) -> Turn:
        """The turn (``ProtocolError`` with the partial turn if :meth:`end` never came)."""
        if not self._ended:
            raise ProtocolError(
                "the text stream ended before the model finished (no finish reason)",
                hint="the connection was probably cut; retry the request",
                partial=self._partial(),
            )
        return self._asm.close()

    def _apply(self, events: list[Event]) -> list[Event]:
        out: list[Event] = []
        asm = self._asm
        asm.events = out
        for event in events:
            asm.apply(event)
        return out

    def _partial(self) -> Turn | None:
        try:
            return self._asm.close()
        except ProtocolError:
            return None
