"""From a model's raw text to a ``Turn``, through the one assembler.

A text format's stream emits wire events; ``TextTurnDecoder`` applies them to an
``Assembler`` exactly as a provider decoder would, so a raw completion from an
open-weight model ends in the same ``Turn`` (same rules for ids, names, duplicate ids and
per-call JSON errors, same ``ToolCallReady`` the moment a call's arguments close) as an
OpenAI or Anthropic stream.
"""

from __future__ import annotations

from ..turn import Turn
from ..wire.assembler import Assembler
from ..wire.events import Event
from .base import Format, FormatStream

__all__ = ["TextTurnDecoder"]


class TextTurnDecoder:
    """Decodes one raw-text model turn: ``feed(text_delta)`` events, then ``close()`` a Turn."""

    def __init__(self, fmt: Format, *, id_prefix: str | None = None) -> None:
        self._stream: FormatStream = fmt.stream(id_prefix=id_prefix)
        self._asm = Assembler()

    def feed(self, text: str) -> list[Event]:
        """Consume the next piece of generated text; return the assembler's events."""
        return self._apply(self._stream.feed(text))

    def close(self, finish_reason: str | None = "stop") -> Turn:
        """End of generation. ``finish_reason`` is the server's (``stop``, ``length``).

        Text servers do not know about tool calls, so a turn that holds calls and
        stopped normally is reported with the finish reason ``tool_calls``. Output cut
        off inside a call raises the format's ``FormatError`` (see each family's docs).
        """
        self._apply(self._stream.close())
        has_calls = bool(self._asm.call_indexes())
        if finish_reason is not None:
            self._asm.finish(
                "tool_calls" if has_calls and finish_reason == "stop" else finish_reason
            )
        return self._asm.close()

    def _apply(self, events: list[Event]) -> list[Event]:
        asm = self._asm
        out: list[Event] = []
        asm.events = out
        for event in events:
            asm.apply(event)
        return out
