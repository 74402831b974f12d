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

Fenced calls: Qwen2.5-Coder writes its call as a Markdown block, ```` ```json\n{"name":
..., "arguments": {...}}\n``` ````, as llama.cpp's Hermes 2 Pro parser
(``common/chat.cpp``, ``common_chat_parse_hermes_2_pro``) also accepts. With the
offered tools known, a fence (info string empty or ``json``) whose whole body is one
JSON object, or a list of objects, each with a ``name`` that is an offered tool and an
``arguments`` (or ``parameters``) object, is read as those calls; the block is held
until its closing fence (or the end of the output, or ``<|im_end|>``) decides it, and
anything else is content verbatim. Without tools a fence is plain text (an answer may
show such JSON; ARCHITECTURE.md says the rule and its risk).

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

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..wire.jsonscan import ClosureScanner
from .base import Format, FormatStream
from .callobject import CallObjectReader, raw_elements, raw_members
from .markers import MarkerSet, marker_set, opens_reasoning, skip_whitespace

__all__ = ["HermesFormat", "HermesStream", "make"]


THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
# ChatML's end of turn: a server that keeps special tokens passes it on. Dropped, and it
# ends a call whose </tool_call> is missing as the end of the output does.
IM_END = "<|im_end|>"
# A Markdown code fence: Qwen2.5-Coder writes its call as a fenced JSON block.
FENCE = "```"
_FENCE_INFO = "json"  # the fence's info string, when it has one
_FENCE_LINE = 40  # a longer fence line (spaces) is no call's


def _fence_line_rejected(line: str) -> bool:
    """Whether a fence's line so far can no longer open a call: too long, or an info
    string that cannot grow into ``json``. Once true it stays true as the line grows."""
    return len(line) > _FENCE_LINE or not _FENCE_INFO.startswith(line[len(FENCE) :].strip().lower())


_ARGS_KEYS = ("arguments", "parameters")

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
        # A fenced JSON block is read as calls only when the tools are known: it must
        # name an offered tool (a fence is no marker: answers show JSON in fences).
        self.fenced_calls = bool(self.tools.names)
        content = (CALL_OPEN, THINK_OPEN, IM_END) if self.has_reasoning else (CALL_OPEN, IM_END)
        self.content_markers = (
            marker_set(*content, FENCE) if self.fenced_calls else marker_set(*content)
        )
        self.reasoning_markers = marker_set(THINK_CLOSE)

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
        # A fenced block that may be calls, held until it is decided: the fence and
        # its info line, the JSON value, and what followed the value.
        self._fence_at = 0
        self._fence: list[str] = []
        self._value: list[str] = []
        self._after: list[str] = []
        self._scanner = ClosureScanner()

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
            elif state == "call_end":  # (before reasoning: every call passes here)
                pos = self._scan_call_end(text, pos)
            elif state == "reasoning":
                pos = self._scan_text(text, pos, self.format.reasoning_markers, self._reasoning)
            else:
                pos = self._scan_fence(text, pos)

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
        elif marker == FENCE:
            self._state = "fence_info"
            self._fence_at = at
            self._fence = [FENCE]
            self._value = []
            self._after = []
            self._scanner = ClosureScanner()
        else:  # </think>, or <|im_end|> (dropped)
            self._state = "content"

    def _scan_call_end(self, text: str, pos: int) -> int:
        # Streamed a character at a time this runs for each character of the
        # "\n</tool_call>" that ends every call: the common case (a space, or a
        # beginning of </tool_call>) is decided first, with no call it does not need
        # (the whitespace skipped inline: a call to skip_whitespace costs more).
        end = len(text)
        while pos < end and text[pos] in _SPACE:
            pos += 1
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

    # ---- a fenced JSON block (Qwen2.5-Coder): calls, or content

    def _scan_fence(self, text: str, pos: int) -> int:
        """Read a fenced block that may hold calls; hold it until it is decided."""
        state = self._state
        if state == "fence_info":
            return self._scan_fence_info(text, pos)
        if state == "fence_value":
            return self._scan_fence_value(text, pos)
        return self._scan_fence_end(text, pos)

    def _scan_fence_info(self, text: str, pos: int) -> int:
        """The rest of the fence's line: nothing, or ``json``."""
        end = text.find("\n", pos)
        stop = len(text) if end < 0 else end + 1
        piece = text[pos:stop]
        line = "".join(self._fence) + piece
        if _fence_line_rejected(line):
            # Rejected at the first character no call's fence line can have, as a
            # stream fed a character at a time rejects it: what follows is content
            # again, scanned for markers (``````<tool_call>`` holds a call).
            held = len(line) - len(piece)
            cut = 1
            while not _fence_line_rejected(line[: held + cut]):
                cut += 1
            self._fence.append(piece[:cut])
            return self._fence_is_text(pos + cut)
        self._fence.append(piece)
        if end < 0:
            self._buf = ""
            return -1
        if line[len(FENCE) :].strip().lower() not in ("", _FENCE_INFO):
            return self._fence_is_text(stop)  # "```js": decided at the line's end
        self._state = "fence_value"
        return stop

    def _scan_fence_value(self, text: str, pos: int) -> int:
        """One JSON object or list, read as it arrives."""
        if not self._scanner.started:
            first = skip_whitespace(text, pos)
            self._fence.append(text[pos:first])
            if first == len(text):
                self._buf = ""
                return -1
            if text[first] not in "{[":
                return self._fence_is_text(first)
            pos = first
        end = self._scanner.feed(text, pos)
        self._value.append(text[pos:] if end < 0 else text[pos:end])
        if end < 0:
            self._buf = ""
            return -1
        self._state = "fence_end"
        return end

    def _scan_fence_end(self, text: str, pos: int) -> int:
        """After the value: only the closing fence (or the end of the turn)."""
        start = skip_whitespace(text, pos)
        self._after.append(text[pos:start])
        if text.startswith(FENCE, start):
            self._after.append(FENCE)
            return self._fence_decided(text, start + len(FENCE))
        if text.startswith(IM_END, start):
            return self._fence_decided(text, start)
        rest = text[start:]
        if FENCE.startswith(rest) or IM_END.startswith(rest):
            self._buf = rest
            return -1
        return self._fence_is_text(start)

    def _fence_is_text(self, pos: int) -> int:
        """The fenced block is no call: what was held of it is content."""
        self._state = "content"
        self._text("".join(self._fence) + "".join(self._value) + "".join(self._after))
        return pos

    def _fence_decided(self, text: str, end: int) -> int:
        """The block closed before ``text[end]``: its calls, or it is content."""
        return end if self._fenced_emit(text, end) else self._fence_is_text(end)

    def _fenced_emit(self, text: str, end: int) -> bool:
        """Report the block's calls, ending before ``text[end]``; ``False``: none."""
        calls = self._fenced_calls("".join(self._value))
        if not calls:
            return False
        self._state = "content"
        self._call_begins(self._fence_at)
        for name, arguments in calls:
            self._begin_call(name)
            self._arguments(arguments)
        self._call_ends(self._at(text, end))
        return True

    def _fenced_calls(self, value: str) -> list[tuple[str, str]]:
        """The calls of a fenced JSON value, or none unless every object is a call.

        A call is an object with a string ``name`` that is an offered tool and an
        ``arguments`` (or ``parameters``) object; a list must hold only calls.
        """
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return []
        if isinstance(parsed, dict):
            objects, texts = [parsed], [value]
        elif isinstance(parsed, list) and parsed:
            objects, texts = parsed, raw_elements(value)
        else:
            return []
        calls: list[tuple[str, str]] = []
        tools = self.format.tools
        for obj, raw in zip(objects, texts, strict=True):
            if not isinstance(obj, dict) or obj.get("name") not in tools:
                return []
            key = next((k for k in _ARGS_KEYS if k in obj), None)
            if key is None or not isinstance(obj[key], dict):
                return []
            calls.append((obj["name"], raw_members(raw)[key]))
        return calls

    def _close(self) -> None:
        if self._state.startswith("fence"):
            # Ended in a fenced block: calls when its value closed and is calls (the
            # closing fence missing at the end of the output, as </tool_call> may be).
            buf = self._buf
            if self._state != "fence_end" or not self._fenced_emit(buf, len(buf)):
                self._fence_is_text(0)
                self._text(buf)
            self._buf = ""
            return
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
