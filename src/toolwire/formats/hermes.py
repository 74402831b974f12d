"""Hermes-style tool calls: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

Used by Qwen2.5, Qwen3, QwQ and NousResearch Hermes 2 Pro / 3 / 4. The Qwen3 chat
template (``Qwen/Qwen3-8B`` ``tokenizer_config.json``) renders an assistant turn as::

    <think>\\nREASONING\\n</think>\\n\\nCONTENT\\n
    <tool_call>\\n{"name": "f", "arguments": {...}}\\n</tool_call>

with one ``<tool_call>`` block per call, separated by ``\\n``. vLLM's
``tests/tool_parsers/test_hermes_tool_parser.py`` shows the generated shapes (no
newlines inside the tags, several calls back to back, a call running to the end of
the output without ``</tool_call>``).

Strategy: a three-state machine (content, reasoning, call). In content and reasoning
only the markers that can follow are searched and only a possible marker prefix is
held back. Inside ``<tool_call>`` the JSON object is read by
:class:`~toolwire.formats.base.CallObjectReader`: the name is announced when its string
closes and the arguments stream verbatim as they arrive. Because the object is read
as JSON, ``</tool_call>`` inside an argument string is part of the value; the end
marker is looked for only after the object closed.

Variants: ``qwen3`` and ``hermes`` know ``<think>`` and start in reasoning when the
generation prompt left ``<think>`` open; ``qwen3-thinking`` and ``qwq`` (templates
that always pre-fill ``<think>\\n``) start in reasoning unless a generation prompt says
otherwise; ``qwen2.5`` has no reasoning markers. Inside reasoning only ``</think>`` is
a marker: a ``<tool_call>`` there is the model mentioning one.

Text is kept exactly, except the separator whitespace the template puts around blocks
(trimmed by the stream, see :mod:`.trim`); a stray ``</think>`` or ``</tool_call>``
outside its block is content.

Truncated and malformed output (what the parser reports as :class:`FormatError`; the
stream then retracts the call and passes its text through as content with a notice,
or raises with ``strict=True``):

* Output cut off inside a call (the object not closed): at ``close()``; the call has
  been announced, so in the default mode it is retracted.
* A call whose object closed but whose ``</tool_call>`` never came (the model stopped
  at end of sequence) is complete and kept.
* A call body that is not a JSON object with a string ``name``, or non-whitespace text
  between the object and ``</tool_call>``, is malformed at once.
* Arguments are passed on verbatim; whether they are valid JSON for the tool is for the
  assembler and the validator to judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import Format, FormatStream
from .callobject import CallObjectReader
from .markers import MarkerSet, opens_reasoning, skip_whitespace

__all__ = ["HermesFormat", "HermesStream", "make"]


THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
# ChatML's end of turn: a server that keeps special tokens passes it on. Dropped, and it
# ends a call whose </tool_call> is missing as the end of the output does.
IM_END = "<|im_end|>"

_SPACE = " \t\r\n"  # what skip_whitespace skips
_ALWAYS_THINKING = frozenset({"qwen3-thinking", "qwq"})
_NO_REASONING = frozenset({"qwen2.5"})


class HermesFormat(Format):
    """The Hermes / Qwen ``<tool_call>`` JSON format."""

    family = "hermes"

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        super().__init__(variant, tools=tools, generation_prompt=generation_prompt)
        self.has_reasoning = variant not in _NO_REASONING
        self.markers = (
            (THINK_OPEN, THINK_CLOSE, CALL_OPEN, CALL_CLOSE, IM_END)
            if self.has_reasoning
            else (CALL_OPEN, CALL_CLOSE, IM_END)
        )
        self.starts_in_reasoning = self.has_reasoning and (
            opens_reasoning(generation_prompt, THINK_OPEN, THINK_CLOSE)
            if generation_prompt is not None
            else variant in _ALWAYS_THINKING
        )
        self.content_markers = MarkerSet(
            (CALL_OPEN, THINK_OPEN, IM_END) if self.has_reasoning else (CALL_OPEN, IM_END)
        )
        self.reasoning_markers = MarkerSet((THINK_CLOSE,))

    def _open_stream(self, id_prefix: str | None) -> HermesStream:
        """Start an incremental parse of one output (the family's parser)."""
        return HermesStream(self, id_prefix=id_prefix)


class HermesStream(FormatStream):
    """Incremental parser of one Hermes-format output."""

    format: HermesFormat

    def __init__(self, fmt: HermesFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._state = "reasoning" if fmt.starts_in_reasoning else "content"
        self._buf = ""
        self._reader = CallObjectReader(family=fmt.family)

    def _feed(self, delta: str) -> None:
        buf = self._buf
        text = buf + delta if buf else delta
        pos = 0
        # Each handler consumes from ``pos`` and returns where to continue, or -1 after
        # keeping what it cannot decide yet in ``self._buf``. Dispatched here, with no
        # call in between (streaming a character at a time runs this per character);
        # inside a call first: a call-dense output spends most of its deltas there.
        while pos >= 0:
            state = self._state
            if state == "call":
                # The call object, read in place (most deltas of a call-dense output).
                ops, end = self._reader.feed(text, pos)
                for kind, value in ops:
                    if kind == "name":
                        self._begin_call(value)
                    else:
                        self._arguments(value)
                if end < 0:
                    self._buf = ""
                    return
                self._state = "call_end"
                pos = end
            elif state == "content":
                pos = self._scan_text(text, pos, self.format.content_markers, self._text)
            elif state == "reasoning":
                pos = self._scan_text(text, pos, self.format.reasoning_markers, self._reasoning)
            else:
                pos = self._scan_call_end(text, pos)

    def _scan_text(self, text: str, pos: int, markers: MarkerSet, emit: Any) -> int:
        if not markers.may_start(text, pos):  # fast path: plain text
            emit(text[pos:] if pos else text)
            self._buf = ""
            return -1
        found = markers.search(text, pos)
        if found is None:
            held = markers.holdback(text, pos)
            emit(text[pos : len(text) - held])
            self._buf = text[len(text) - held :]
            return -1
        start, marker = found
        emit(text[pos:start])
        self._enter(marker, self._at(text, start))
        return start + len(marker)

    def _enter(self, marker: str, at: int) -> None:
        if marker == CALL_OPEN:
            self._call_begins(at)
            self._state = "call"
            self._reader = CallObjectReader(family=self.format.family)
        elif marker == THINK_OPEN:
            self._state = "reasoning"
        else:  # </think>, or <|im_end|> (dropped)
            self._state = "content"

    def _scan_call_end(self, text: str, pos: int) -> int:
        # Streamed a character at a time this runs for each character of the
        # "\n</tool_call>" that ends every call: the common case (a space, or a
        # beginning of </tool_call>) is decided first, with no call it does not need.
        if pos < len(text) and text[pos] in _SPACE:
            pos = skip_whitespace(text, pos)
        rest = text[pos : pos + len(CALL_CLOSE)]
        if rest == CALL_CLOSE:
            self._state = "content"
            self._call_ends(self._at(text, pos + len(CALL_CLOSE)))
            return pos + len(CALL_CLOSE)
        if CALL_CLOSE.startswith(rest):
            self._buf = text[pos:]
            return -1
        if text.startswith(IM_END, pos):  # </tool_call> missing at the end of the turn
            self._state = "content"
            self._call_ends(self._at(text, pos))
            return pos
        if IM_END.startswith(rest):
            self._buf = text[pos:]
            return -1
        raise self._error(
            f"unexpected text after the call object: {text[pos : pos + 30]!r}",
            where=f"tool call {self.call_count - 1}",
        )

    def _close(self) -> None:
        if self._state == "call":
            raise self._error(
                "the output ended inside a tool call (cut off by the token limit?)",
                where=f"tool call {max(self.call_count - 1, 0)}",
            )
        if self._state == "content":
            self._text(self._buf)
        elif self._state == "reasoning":
            self._reasoning(self._buf)
        # "call_end": the object closed; a missing </tool_call> (end of sequence) is fine.
        self._buf = ""


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> HermesFormat:
    """Build the Hermes format of ``variant`` (one of the registry's)."""
    return HermesFormat(variant, tools=tools, generation_prompt=generation_prompt)
