"""Kimi tool-call formats: K2 ``<|tool_calls_section_begin|>`` markers and K3 XTML channels.

Strategy: the shared marker machinery of :mod:`toolwire.formats.markup`
(:class:`~toolwire.formats.markup.MarkupStream`: one method per parser state, only a
possible marker prefix held back, cost linear in the output).

K2 (sources: MoonshotAI/Kimi-K2 ``docs/tool_call_guidance.md``; the official templates
mirrored in ggml-org/llama.cpp ``models/templates/moonshotai-Kimi-K2.jinja`` and
``Kimi-K2-Thinking.jinja``; vllm-project/vllm
``tests/tool_parsers/test_kimi_k2_tool_parser.py``)::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
    <|tool_call_argument_begin|>{JSON}<|tool_call_end|>...<|tool_calls_section_end|>

``functions.NAME:IDX`` is the call's id (kept as the id, as the template replays it);
``NAME:IDX`` without the prefix is accepted too. K2-Thinking reasons in
``<think>…</think>`` at the start of the output. The arguments JSON streams as it
arrives and ends where its closing brace is, so marker-like text inside a JSON string
is part of the value.

K3 (sources: the official template mirrored in ggml-org/llama.cpp
``models/templates/Kimi-K3.jinja``; sgl-project/sglang
``python/sglang/srt/function_call/kimik3_format.py``; vllm-project/vllm
``vllm/tool_parsers/kimi_k3_tool_parser.py``). What K3 changed: XTML channels built
from the special tokens ``<|open|>``, ``<|close|>``, ``<|sep|>``::

    <|open|>think<|sep|>R<|close|>think<|sep|><|open|>response<|sep|>C<|close|>response<|sep|>
    <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
    <|open|>argument key="K" type="string"<|sep|>V<|close|>argument<|sep|>...
    <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>

Argument values carry a type tag: ``type="string"`` is raw text (streamed as a JSON
string), any other type is JSON text (validated when it closes); an argument without a
tag is typed by the tool's schema. The template writes string values raw, so a value
may hold ``<|close|>argument<|sep|>`` itself: a closing tag ends the value only when
another argument or the end of the call follows it. A call body may instead be one
``<|open|>json type="object"<|sep|>{...}<|close|>json<|sep|>`` block. Attribute values
are unescaped (``&quot;``, ``&amp;``). Calls carry no id, so one is generated. The
generation prompt opens the think channel when thinking is on (the template default,
assumed when ``generation_prompt`` is ``None``) or the response channel; text outside
any channel is content.

Decisions (both variants): output that ends inside a call, or inside a tool-call
section before any call completed, raises :class:`~toolwire.formats.base.FormatError`;
a section whose calls completed but whose closing marker is missing is accepted.
Malformed calls (text where a marker must come, a missing name, K2 arguments that are
not a JSON object, a K3 value that does not match its JSON type tag, a duplicate key)
raise FormatError. End-of-message tokens are dropped, and so is the noise a K2 section
leaves after it ends (a repeated ``<|tool_calls_section_end|>``, a stray
``<|tool_call_end|>`` or ``<|tool_call_argument_end|>``); text after the section is
content. K2.5's ``<|tool_call_argument_end|>`` before ``<|tool_call_end|>`` is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .base import Format, FormatStream
from .markers import MarkerSet, opens_reasoning
from .markup import THINK_CLOSE, THINK_OPEN, ArgumentWriter, MarkupStream, ThinkStream
from .values import value_end

__all__ = ["KimiFormat", "make"]


# ---- K2 markers
SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
ARGS_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
IM_END = "<|im_end|>"
# K2.5 closes the arguments with a token of its own before <|tool_call_end|>.
ARGS_END = "<|tool_call_argument_end|>"
# Closing tokens a section leaves behind after it ended (a repeated section end, a call
# end with no call open): noise, never content.
_STRAY = (SECTION_END, CALL_END, ARGS_END)

# ---- K3 markers
K3_THINK_OPEN = "<|open|>think<|sep|>"
K3_THINK_CLOSE = "<|close|>think<|sep|>"
RESPONSE_OPEN = "<|open|>response<|sep|>"
RESPONSE_CLOSE = "<|close|>response<|sep|>"
TOOLS_OPEN = "<|open|>tools<|sep|>"
TOOLS_CLOSE = "<|close|>tools<|sep|>"
MESSAGE_CLOSE = "<|close|>message<|sep|>"
END_OF_MSG = "<|end_of_msg|>"
K3_CALL_OPEN = "<|open|>call"
K3_CALL_CLOSE = "<|close|>call<|sep|>"
ARG_OPEN = "<|open|>argument"
ARG_CLOSE = "<|close|>argument<|sep|>"
JSON_OPEN = "<|open|>json"
JSON_CLOSE = "<|close|>json<|sep|>"
XTML_SEP = "<|sep|>"

# What may follow an argument's closing tag: a closing tag followed by anything else
# is part of the value (a K3 string that mentions the markup).
_AFTER_ARGUMENT = (ARG_OPEN, K3_CALL_CLOSE)


_K2_ID = re.compile(r"(?:functions\.)?(.+):\d+", re.DOTALL)
_ATTR = re.compile(r'(\w+)="([^"]*)"')


# --------------------------------------------------------------------------- K2

# Shared by every stream (a stream's start builds no marker set).
_K2_CONTENT = MarkerSet([SECTION_BEGIN, IM_END, *_STRAY])
_K2_HEAD = MarkerSet([ARGS_BEGIN, CALL_END, SECTION_END, CALL_BEGIN])
_K2_TAIL = MarkerSet([CALL_END, SECTION_END, CALL_BEGIN, ARGS_BEGIN])
_K2_SECTION = MarkerSet([CALL_BEGIN, SECTION_END, IM_END])


class _K2Stream(ThinkStream):
    def __init__(self, fmt: KimiFormat, *, id_prefix: str | None, reasoning_open: bool) -> None:
        super().__init__(fmt, id_prefix=id_prefix, reasoning_open=reasoning_open)
        self._content_markers = _K2_CONTENT
        self._head_markers = _K2_HEAD
        self._tail_markers = _K2_TAIL
        self._section_markers = _K2_SECTION
        self._head: list[str] = []
        self._section_calls = 0

    def _st_content(self) -> bool:
        chunk, marker = self._until(self._content_markers)
        self._text(chunk)
        if marker == SECTION_BEGIN:
            self._markup_begins(marker)
            self._section_calls = 0
            self._state = self._st_section
        return marker is not None

    def _st_section(self) -> bool:
        # An end-of-turn token also ends a section whose closing marker is missing.
        # Text between the markers (models write some) is content, not a broken call.
        if self._buf.startswith(CALL_BEGIN, self._pos):  # the usual case: one check
            self._pos += len(CALL_BEGIN)
            seen: str | None = CALL_BEGIN
        else:
            chunk, seen = self._until(self._section_markers)
            self._text(chunk)
        if seen is None:
            return False
        self._head = []
        if seen == CALL_BEGIN and self._anchor is None:  # else the section's anchor stays
            self._markup_begins(seen)
        self._state = self._st_head if seen == CALL_BEGIN else self._st_content
        return True

    def _st_head(self) -> bool:
        chunk, marker = self._until(self._head_markers)
        self._head.append(chunk)
        if marker is None:
            return False
        call_id = "".join(self._head).strip()
        self._head = []
        match = _K2_ID.fullmatch(call_id)
        if marker != ARGS_BEGIN or match is None:
            raise self._error(
                f"bad call header {call_id[:60]!r} (expected functions.NAME:IDX before "
                f"{ARGS_BEGIN})",
                f"tool call {self.call_count}",
            )
        self._begin_call(match.group(1), call_id)
        self._start_json_arguments(self._st_tail)
        return True

    def _st_tail(self) -> bool:
        if self._read_tail(self._tail_markers, CALL_END, ("", ARGS_END)) is None:
            return False
        self._section_calls += 1
        self._markup_ends()
        self._state = self._st_section
        return True

    def _finish(self) -> None:
        if self._at_rest() or (self._state == self._st_section and self._section_calls):
            return
        raise self._error("the output ended inside a tool call (truncated?)", self._where())


# --------------------------------------------------------------------------- K3

_K3_TOP = MarkerSet(
    [
        K3_THINK_OPEN,
        K3_THINK_CLOSE,
        RESPONSE_OPEN,
        RESPONSE_CLOSE,
        TOOLS_OPEN,
        TOOLS_CLOSE,
        MESSAGE_CLOSE,
        END_OF_MSG,
    ]
)
_K3_THINK_END = MarkerSet([K3_THINK_CLOSE])
_K3_HEADER_END = MarkerSet([XTML_SEP])
_K3_VALUE_END = MarkerSet([ARG_CLOSE])
_K3_JSON_END = MarkerSet([JSON_CLOSE, K3_CALL_CLOSE, ARG_OPEN, JSON_OPEN])


class _K3Stream(MarkupStream):
    def __init__(self, fmt: KimiFormat, *, id_prefix: str | None, reasoning_open: bool) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._tools = fmt.tools
        self._top_markers = _K3_TOP
        self._think_end = _K3_THINK_END
        self._header_end = _K3_HEADER_END
        self._value_end = _K3_VALUE_END
        self._json_end = _K3_JSON_END
        self._head: list[str] = []
        self._name = ""
        self._writer = ArgumentWriter(self._arguments)
        self._json_block = False
        self._section_calls = 0
        self._state = self._st_think if reasoning_open else self._st_top

    def _st_top(self) -> bool:
        chunk, marker = self._until(self._top_markers)
        self._text(chunk)
        if marker == K3_THINK_OPEN:
            self._state = self._st_think
        elif marker == TOOLS_OPEN:
            self._markup_begins(marker)
            self._section_calls = 0
            self._state = self._st_tools
        return marker is not None

    def _st_think(self) -> bool:
        chunk, marker = self._until(self._think_end)
        self._reasoning(chunk)
        if marker is None:
            return False
        self._state = self._st_top
        return True

    def _st_tools(self) -> bool:
        # The message end also ends a tools channel whose closing tag is missing.
        ends = (K3_CALL_OPEN, TOOLS_CLOSE, MESSAGE_CLOSE, END_OF_MSG)
        seen = self._expect(ends, f"{K3_CALL_OPEN} or {TOOLS_CLOSE}")
        if seen is None:
            return False
        self._head = []
        if seen == K3_CALL_OPEN and self._anchor is None:  # else the section's anchor stays
            self._markup_begins(seen)
        self._state = self._st_call_head if seen == K3_CALL_OPEN else self._st_top
        return True

    def _read_header(self) -> dict[str, str] | None:
        chunk, marker = self._until(self._header_end)
        self._head.append(chunk)
        if marker is None:
            return None
        head = "".join(self._head)
        self._head = []
        if "<|" in head:
            raise self._error(f"bad tag header {head[:60]!r}", self._where())
        return {key: _unescape(value) for key, value in _ATTR.findall(head)}

    def _st_call_head(self) -> bool:
        attrs = self._read_header()
        if attrs is None:
            return False
        self._name = attrs.get("tool", "")
        if not self._name:
            raise self._error("a call has no tool attribute", f"tool call {self.call_count}")
        self._begin_call(self._name)
        self._writer = ArgumentWriter(self._arguments)
        self._json_block = False
        self._state = self._st_call_body
        return True

    def _st_call_body(self) -> bool:
        choices = (K3_CALL_CLOSE,) if self._json_block else (ARG_OPEN, JSON_OPEN, K3_CALL_CLOSE)
        seen = self._expect(choices, " or ".join(choices))
        if seen is None:
            return False
        if seen == K3_CALL_CLOSE:
            if not self._json_block:
                self._writer.close()
            self._section_calls += 1
            self._markup_ends()
            self._state = self._st_tools
        elif seen == ARG_OPEN:
            self._state = self._st_arg_head
        elif not self._writer.empty:
            raise self._error("a call mixes argument tags and a json block", self._where())
        else:
            self._state = self._st_json_head
        return True

    def _st_arg_head(self) -> bool:
        attrs = self._read_header()
        if attrs is None:
            return False
        key = attrs.get("key")
        if key is None:
            raise self._error("an argument has no key attribute", self._where())
        if not self._writer.key(key):
            raise self._error(f"duplicate argument {key!r}", self._where())
        kind = attrs.get("type")
        if kind == "string":
            self._writer.begin_text()
        elif kind is None:
            self._writer.begin_typed(self._tools.property_schema(self._name, key))
        else:
            self._writer.begin_json()
        self._state = self._st_arg_value
        return True

    def _st_arg_value(self) -> bool:
        # A closing tag inside a value ends it only when another argument or the end
        # of the call follows.
        pos = self._pos
        stop, resume = value_end(self._buf, pos, self._value_end, _AFTER_ARGUMENT, self._final)
        self._writer.piece(self._buf[pos:stop])
        if resume < 0:
            self._pos = stop
            return False
        self._pos = resume
        problem = self._writer.end_value()
        if problem:
            raise self._error(problem, self._where())
        self._state = self._st_call_body
        return True

    def _st_json_head(self) -> bool:
        if self._read_header() is None:
            return False
        self._json_block = True
        self._start_json_arguments(self._st_json_tail)
        return True

    def _st_json_tail(self) -> bool:
        if self._read_tail(self._json_end, JSON_CLOSE, ("",)) is None:
            return False
        self._state = self._st_call_body
        return True

    def _finish(self) -> None:
        at_rest = self._state in (self._st_top, self._st_think)
        if at_rest or (self._state == self._st_tools and self._section_calls):
            return
        raise self._error("the output ended inside a tool call (truncated?)", self._where())


def _unescape(value: str) -> str:
    # Reverse of the template's escape_attr (& first there, so &quot; first here).
    return value.replace("&quot;", '"').replace("&amp;", "&")


# --------------------------------------------------------------------------- the format


class KimiFormat(Format):
    """The Kimi tool-call format of one variant (see the module docstring)."""

    family: ClassVar[str] = "kimi"

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        super().__init__(variant, tools=tools, generation_prompt=generation_prompt)
        prompt = self.prompt
        if variant == "k3":
            self.reasoning_open = opens_reasoning(prompt, K3_THINK_OPEN, K3_THINK_CLOSE)
            self.markers: tuple[str, ...] = _K3_MARKERS
        else:
            self.reasoning_open = opens_reasoning(prompt, THINK_OPEN, THINK_CLOSE)
            self.markers = _K2_MARKERS

    def _open_stream(self, id_prefix: str | None) -> FormatStream:
        """Start an incremental parse of one output (the family's parser)."""
        if self.variant == "k3":
            return _K3Stream(self, id_prefix=id_prefix, reasoning_open=self.reasoning_open)
        return _K2Stream(self, id_prefix=id_prefix, reasoning_open=self.reasoning_open)


_K2_MARKERS = (
    THINK_OPEN,
    THINK_CLOSE,
    SECTION_BEGIN,
    SECTION_END,
    CALL_BEGIN,
    ARGS_BEGIN,
    CALL_END,
    ARGS_END,
    IM_END,
)
_K3_MARKERS = (
    K3_THINK_OPEN,
    K3_THINK_CLOSE,
    RESPONSE_OPEN,
    RESPONSE_CLOSE,
    TOOLS_OPEN,
    TOOLS_CLOSE,
    MESSAGE_CLOSE,
    END_OF_MSG,
    K3_CALL_CLOSE,
    ARG_CLOSE,
    JSON_CLOSE,
    XTML_SEP,
)


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> KimiFormat:
    """Build the Kimi format of ``variant`` (one of the registry's).

    Raises:
        CallerError: Unknown variant, or malformed ``tools``.
    """
    return KimiFormat(variant, tools=tools, generation_prompt=generation_prompt)
