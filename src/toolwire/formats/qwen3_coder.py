"""Qwen3-Coder XML tool calls, values typed by the tool's JSON Schema.

The Qwen3-Coder chat template (``Qwen/Qwen3-Coder-30B-A3B-Instruct``
``chat_template.jinja``) renders each call as::

    <tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n...</function>\\n</tool_call>

with string values written raw and other values as JSON (``tojson``). Qwen3.5 uses
the same calls with ``<think>`` reasoning, its template pre-filling ``<think>\\n``.
Generated shapes are quoted from vLLM ``tests/tool_parsers/test_qwen3coder_tool_parser.py``
(content glued to ``<tool_call>``, parallel calls, a ``<function=`` without the
``<tool_call>`` wrapper).

Strategy: a small state machine over the tags. A value is everything up to its
``</parameter>``, less the one newline the template puts on each side; nothing else
ends it, so ``<parameter=``, ``</function>`` or ``</tool_call>`` inside a value are
part of the value. A value whose schema type is string (or unknown) streams as JSON
string fragments as it arrives; any other value is typed when it closes by
:func:`~toolwire.formats.base.coerce_value` (``3`` is an integer only if the schema
says integer or number; a value that does not fit its type stays a string for the
validator to report).

Variants llama.cpp passes on: a bare ``<function=`` block (no ``<tool_call>``) is a
call, and the closing ``</tool_call>`` it may still carry is dropped, not content.
A call written inside reasoning (Qwen3.5's pre-filled ``<think>`` the model never
closes) is a call: this family's exception to "inside reasoning only its end counts".
Only ``<tool_call>`` followed by ``<function=`` counts there (the template's layout,
distinctive where a mention of the tag is not); reasoning goes on after the call.

Truncated and malformed output:

* Output cut off inside a call raises :class:`FormatError` from ``close()``; a call
  whose ``</function>`` arrived is complete even without ``</tool_call>``.
* Text other than the expected tags inside a call, a parameter given twice, or a
  name that spans a line raises :class:`FormatError` at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .base import Format, FormatStream
from .coerce import json_string, schema_types, value_to_json
from .markers import MarkerSet, continues, marker_set, opens_reasoning, skip_whitespace

__all__ = ["Qwen3CoderFormat", "Qwen3CoderStream", "make"]


THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
PARAM_OPEN = "<parameter="
PARAM_CLOSE = "</parameter>"

_VALUE_END = MarkerSet((PARAM_CLOSE, FUNCTION_CLOSE))
_REASONING_MARKERS = MarkerSet((THINK_CLOSE, CALL_OPEN))
# What may follow a </parameter> that really closes (anything else: part of the value).
_AFTER_PARAM = (PARAM_OPEN, FUNCTION_CLOSE)
# Inside <tool_call>, </tool_call> may follow too (</function> missing: recovered).
_AFTER_PARAM_WRAPPED = (*_AFTER_PARAM, CALL_CLOSE)
_LONGEST_TAG = max(len(t) for t in (CALL_CLOSE, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN))
_NAME_LIMIT = 512  # a tag name longer than this is not a name: fail instead of buffering


class Qwen3CoderFormat(Format):
    """The Qwen3-Coder / Qwen3.5 XML tool-call format."""

    family = "qwen3_coder"

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        super().__init__(variant, tools=tools, generation_prompt=generation_prompt)
        self.has_reasoning = variant == "qwen3.5"
        tags = (CALL_OPEN, CALL_CLOSE, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE)
        self.markers = (THINK_OPEN, THINK_CLOSE, *tags) if self.has_reasoning else tags
        self.starts_in_reasoning = self.has_reasoning and (
            opens_reasoning(generation_prompt, THINK_OPEN, THINK_CLOSE)
            if generation_prompt is not None
            else True
        )
        opening = (CALL_OPEN, FUNCTION_OPEN)
        self.content_markers = (
            marker_set(*opening, THINK_OPEN) if self.has_reasoning else marker_set(*opening)
        )
        # Inside reasoning a call opener is searched for too (see the module docstring).
        self.reasoning_markers = _REASONING_MARKERS

    def _open_stream(self, id_prefix: str | None) -> Qwen3CoderStream:
        """Start an incremental parse of one output (the family's parser)."""
        return Qwen3CoderStream(self, id_prefix=id_prefix)


class Qwen3CoderStream(FormatStream):
    """Incremental parser of one Qwen3-Coder output."""

    format: Qwen3CoderFormat

    def __init__(self, fmt: Qwen3CoderFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._state: Callable[[str, int], int] = (
            self._st_reasoning if fmt.starts_in_reasoning else self._st_content
        )
        self._buf = ""
        self._wrapped = False  # inside <tool_call> (a bare <function= is not)
        # Where a call's end returns to: content, or reasoning for a call written
        # inside a <think> the model never closed.
        self._resume: Callable[[str, int], int] = self._st_content
        self._keys: set[str] = set()
        self._name = ""
        self._key = ""
        self._streaming = False  # the current value streams as a JSON string
        self._value: list[str] = []
        self._final = False

    # ---- driver

    def _feed(self, delta: str) -> None:
        text = self._buf + delta
        self._buf = ""
        pos = 0
        while pos >= 0:
            pos = self._state(text, pos)

    def _hold(self, text: str, pos: int) -> int:
        self._buf = text[pos:]
        return -1

    # ---- outside calls

    def _st_content(self, text: str, pos: int) -> int:
        return self._scan_text(text, pos, self.format.content_markers, self._text)

    def _st_reasoning(self, text: str, pos: int) -> int:
        return self._scan_text(text, pos, self.format.reasoning_markers, self._reasoning)

    def _scan_text(self, text: str, pos: int, markers: MarkerSet, emit: Any) -> int:
        if not markers.may_start(text, pos):  # fast path: plain text
            emit(text[pos:] if pos else text)
            return -1
        found = markers.search(text, pos)
        if found is None:
            held = markers.holdback(text, pos)
            emit(text[pos : len(text) - held])
            return self._hold(text, len(text) - held)
        start, marker = found
        emit(text[pos:start])
        if marker == CALL_OPEN and self._state == self._st_reasoning:
            # In reasoning, <tool_call> is a call only when <function= follows it.
            follows = continues(text, start + len(marker), (FUNCTION_OPEN,), final=False)
            if follows is None:
                if not self._final:
                    return self._hold(text, start)
                follows = True  # the output ended on it: a cut-off call, not text

            if not follows:
                emit(marker)
                return start + len(marker)
        if marker in (CALL_OPEN, FUNCTION_OPEN):
            self._call_begins(self._at(text, start))
            self._resume = self._state
        if marker == CALL_OPEN:
            self._wrapped, self._state = True, self._st_open
        elif marker == FUNCTION_OPEN:
            self._wrapped, self._state = False, self._st_function_name
        else:
            self._state = self._st_reasoning if marker == THINK_OPEN else self._st_content
        return start + len(marker)

    # ---- tags inside a call

    def _expect_tag(self, text: str, pos: int, tags: tuple[str, ...]) -> tuple[int, str]:
        """Skip whitespace and match one of ``tags``: (end, tag), or (-1, "") held."""
        pos = skip_whitespace(text, pos)
        for tag in tags:
            if text.startswith(tag, pos):
                return pos + len(tag), tag
        rest = text[pos : pos + _LONGEST_TAG]  # bounded: slicing the rest would be quadratic
        if len(text) - pos < _LONGEST_TAG and any(tag.startswith(rest) for tag in tags):
            return self._hold(text, pos), ""
        raise self._error(
            f"expected {' or '.join(tags)}, found {rest[:30]!r}",
            where=f"tool call {self.call_count}",
        )

    def _st_open(self, text: str, pos: int) -> int:
        end, tag = self._expect_tag(text, pos, (FUNCTION_OPEN,))
        if tag:
            self._state = self._st_function_name
        return end

    def _read_name(self, text: str, pos: int) -> tuple[int, str | None]:
        end = text.find(">", pos)
        if end < 0:
            if len(text) - pos > _NAME_LIMIT or "\n" in text[pos:]:
                raise self._error("unterminated tag name", where=f"tool call {self.call_count}")
            return self._hold(text, pos), None
        name = text[pos:end].strip()
        if not name or "\n" in name or "<" in name:
            raise self._error(f"invalid tag name {text[pos:end]!r}", f"tool call {self.call_count}")
        return end + 1, name

    def _st_function_name(self, text: str, pos: int) -> int:
        end, name = self._read_name(text, pos)
        if name is not None:
            self._name = name
            self._begin_call(name)
            self._arguments("{")
            self._keys = set()
            self._state = self._st_params
        return end

    def _st_params(self, text: str, pos: int) -> int:
        tags = _AFTER_PARAM_WRAPPED if self._wrapped else _AFTER_PARAM
        end, tag = self._expect_tag(text, pos, tags)
        if tag == PARAM_OPEN:
            self._state = self._st_param_name
        elif tag == FUNCTION_CLOSE:
            self._end_function(text, end)
        elif tag == CALL_CLOSE:  # </function> missing before </tool_call>: recoverable
            self._repaired("</function> was missing before </tool_call>")
            self._end_function(text, end - len(CALL_CLOSE))
        return end

    def _end_function(self, text: str, end: int) -> None:
        self._arguments("}")
        self._call_ends(self._at(text, end))
        self._state = self._st_after_function

    def _st_param_name(self, text: str, pos: int) -> int:
        end, key = self._read_name(text, pos)
        if key is None:
            return end
        if key in self._keys:
            raise self._error(f"parameter {key!r} given twice", f"tool call {self.call_count - 1}")
        separator = ", " if self._keys else ""
        self._keys.add(key)
        self._key = key
        self._arguments(f"{separator}{json_string(key)}: ")
        self._streaming = self._is_string(key)
        if self._streaming:
            self._arguments('"')
        self._value = []
        if end == len(text):  # wait for what follows the tag
            self._state = self._st_value_start
            return end
        return self._st_value_start(text, end)

    def _is_string(self, key: str) -> bool:
        types = schema_types(self.format.tools.property_schema(self._name, key))
        return not types or types == {"string"}

    # ---- values

    def _st_value_start(self, text: str, pos: int) -> int:
        if pos >= len(text):
            return -1
        self._state = self._st_value
        # The template writes one newline after the opening tag.
        return pos + 1 if text[pos] == "\n" else pos

    def _st_value(self, text: str, pos: int) -> int:
        search = pos
        while True:
            found = _VALUE_END.search(text, search)
            if found is None:
                cut = len(text) - _VALUE_END.holdback(text, pos)
                if cut > pos and text[cut - 1] == "\n":
                    cut -= 1  # may be the newline the template puts before </parameter>
                self._value_piece(text[pos:cut])
                return self._hold(text, cut)
            start, tag = found
            # A closing tag inside a value: it closes only when the grammar goes on.
            after = start + len(tag)
            if tag == PARAM_CLOSE:
                grammar = _AFTER_PARAM_WRAPPED if self._wrapped else _AFTER_PARAM
                follows = continues(text, after, grammar, final=self._final, at_end=True)
            else:
                follows = self._function_ends(text, after)
            if follows is None:
                cut = start - 1 if start > pos and text[start - 1] == "\n" else start
                self._value_piece(text[pos:cut])
                return self._hold(text, cut)
            if follows:
                break
            search = after
        piece = text[pos:start]
        self._value_piece(piece[:-1] if piece.endswith("\n") else piece)
        self._finish_value()
        if tag == FUNCTION_CLOSE:  # </parameter> missing right before </function>
            self._repaired("</parameter> was missing before </function>")
            self._end_function(text, start + len(tag))
            return start + len(tag)
        self._state = self._st_params
        return start + len(PARAM_CLOSE)

    def _function_ends(self, text: str, at: int) -> bool | None:
        """Whether a ``</function>`` inside a value (``</parameter>`` missing) ends the call:
        only when the call's closing tags follow and then nothing but another call or
        the end of the output."""
        final = self._final
        if not self._wrapped:
            return continues(text, at, (CALL_OPEN, FUNCTION_OPEN), final=final, at_end=True)
        closing = continues(text, at, (CALL_CLOSE,), final=final, at_end=True)
        if not closing:
            return closing
        end = skip_whitespace(text, at)
        if end == len(text):
            return True  # the output ended right after </function>
        return continues(text, end + len(CALL_CLOSE), (CALL_OPEN,), final=final, at_end=True)

    def _value_piece(self, piece: str) -> None:
        if not piece:
            return
        if self._streaming:
            self._arguments(json_string(piece)[1:-1])
        else:
            self._value.append(piece)

    def _finish_value(self) -> None:
        if self._streaming:
            self._arguments('"')
            return
        schema = self.format.tools.property_schema(self._name, self._key)
        self._arguments(value_to_json("".join(self._value), schema))
        self._value = []

    # ---- after </function>

    def _st_after_function(self, text: str, pos: int) -> int:
        if not self._wrapped:
            # llama.cpp passes Qwen3-Coder's bare <function= block on with the closing
            # </tool_call> whose opener it never wrote: that stray tag is not content.
            start = skip_whitespace(text, pos)
            follows = continues(text, start, (CALL_CLOSE,), final=self._final)
            if follows is None:
                return self._hold(text, pos)
            self._state = self._resume
            return start + len(CALL_CLOSE) if follows else pos
        end, tag = self._expect_tag(text, pos, (CALL_CLOSE, FUNCTION_OPEN))
        if tag == CALL_CLOSE:
            self._state = self._resume
        elif tag == FUNCTION_OPEN:
            self._call_begins(self._at(text, end - len(FUNCTION_OPEN)))
            self._state = self._st_function_name
        return end

    def _close(self) -> None:
        if self._buf and self._state == self._st_value:
            # A closing tag held to see what follows: the end of output decides.
            self._final = True
            text, self._buf = self._buf, ""
            pos = 0
            while pos >= 0 and self._state == self._st_value:
                pos = self._st_value(text, pos)
            if pos >= 0:
                self._buf = text[pos:]
                self._feed("")
        if self._buf and self._state in (self._st_content, self._st_reasoning):
            # A held <tool_call> whose <function= never came is text of its channel.
            self._final = True
            text, self._buf = self._buf, ""
            self._feed(text)
        if self._state == self._st_after_function and not self._wrapped and self._buf:
            self._final = True  # whitespace, or the start of a stray </tool_call>
            text, self._buf = self._buf, ""
            self._feed(text)
        if self._state in (self._st_content, self._st_reasoning):
            (self._text if self._state == self._st_content else self._reasoning)(self._buf)
        elif self._state != self._st_after_function:
            raise self._error(
                "the output ended inside a tool call (cut off by the token limit?)",
                where=f"tool call {max(self.call_count - 1, 0)}",
            )
        self._buf = ""


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> Qwen3CoderFormat:
    """Build the Qwen3-Coder format of ``variant`` (one of the registry's)."""
    return Qwen3CoderFormat(variant, tools=tools, generation_prompt=generation_prompt)
