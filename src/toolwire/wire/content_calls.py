"""Tool calls a served open-weight model left in its answer text (Chat ``content``).

vLLM without ``--enable-auto-tool-choice``, an Ollama or llama.cpp server whose parser
failed, a LiteLLM route: the model's own call markup (Hermes ``<tool_call>``, or its
family's) comes back as the answer. :class:`ContentCalls` reads the content through
that family's streaming parser (a ``toolwire.formats`` ``Format``, handed in by the
provider: this layer does not import ``formats``), with ``hold_calls`` so that a call
is emitted only once whole and never taken back; text is held back only while it may
still be markup, exactly as the formats' own streams do.

Two modes. ``apply``: the calls become tool calls of the turn (a ``calls_from_content``
notice says so) and a ``stop`` finish becomes ``tool_calls``. Otherwise (no tools
offered, or ``tool_choice`` was ``none``) the content stays content as it came, and a
``calls_in_content`` notice says when it held call markup.

A call read from content is placed in the assembler under a negative provider index
(``-1 - n``), a key no server's ``tool_calls[].index`` uses, so it can never be
extended by a native fragment; the assembler gives it the next free index.
"""

from __future__ import annotations

from typing import Any

from ..messages import Usage
from ..turn import Turn
from .assembler import Assembler
from .events import Event, Notice, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallStarted

__all__ = ["ContentCalls", "end_body", "finish_turn"]


class ContentCalls:
    """Reads one turn's content with a model family's call markup parser."""

    def __init__(self, fmt: Any, *, apply: bool = True, id_prefix: str | None = None) -> None:
        """``fmt``: a ``toolwire.formats.Format``. ``apply=False``: only say whether
        the content held call markup. ``id_prefix``: of the ids made for calls the
        markup does not name (random per turn when ``None``)."""
        self._stream: Any = fmt.stream(id_prefix=id_prefix, hold_calls=True)
        self._family = f"{fmt.family}/{fmt.variant}"
        self._apply = apply
        self._calls = 0
        self._ended = False

    def text(self, asm: Assembler, text: str) -> None:
        """One piece of content."""
        events: list[Event] = self._stream.feed(text)
        if not self._apply:
            asm.text(text)  # untouched; the parser only looks
        self._take(asm, events)

    def finish_reason(self, asm: Assembler, reason: str | None) -> str | None:
        """The content is over: flush the parser, say what it found, and return the
        finish reason (``stop`` or none becomes ``tool_calls`` when calls were read)."""
        if self._ended:
            return reason
        self._ended = True
        self._take(asm, self._stream.close())
        if not self._calls:
            return reason
        if not self._apply:
            asm.notice(
                "calls_in_content",
                f"the answer text holds {self._calls} tool call(s) in {self._family} markup; "
                "kept as text (no tools were offered, or tool_choice was none)",
            )
            return reason
        asm.notice(
            "calls_from_content",
            f"{self._calls} tool call(s) the model wrote in its answer text ({self._family} "
            "markup; the server did not parse them) were read as tool calls",
        )
        return "tool_calls" if reason in (None, "stop") else reason

    def _take(self, asm: Assembler, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, ToolCallStarted):
                self._calls += 1
                if self._apply:
                    asm.tool_fragment(-1 - event.index, event.id, event.name, None)
            elif not self._apply:
                continue
            elif isinstance(event, ToolCallDelta):
                asm.tool_fragment(-1 - event.index, None, None, event.arguments)
            elif isinstance(event, TextDelta):
                asm.text(event.text)
            elif isinstance(event, ReasoningDelta):
                asm.reasoning(event.text)
            elif isinstance(event, Notice):
                asm.notice(event.kind, event.message)


def finish_turn(asm: Assembler, reason: str | None, content: ContentCalls | None) -> None:
    """Set the turn's finish reason once the content parser is flushed (calls read from
    the content make ``stop`` ``tool_calls``); no reason, and no calls, sets none."""
    if content is not None:
        reason = content.finish_reason(asm, reason)
    if reason is not None:
        asm.finish(reason)


def end_body(
    asm: Assembler, reason: str | None, content: ContentCalls | None, usage: Usage | None
) -> Turn:
    """A non-streaming body's end, the same for every decoder: finish, usage, close."""
    finish_turn(asm, reason, content)
    if usage is not None:
        asm.set_usage(usage)
    return asm.close()
